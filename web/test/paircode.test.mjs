// The page's pair code is the host's (rpc/lan PairCode): the vector is
// pairCodeVector in rpc/lan/pairlimit_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairCode } from '../src/api.js';

test('pairCode matches the Go vector', () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => i);
  assert.equal(pairCode('link-id', key, 'c2VhbGVk'), '251 825');
});

test('pairCode differs for another hello or another link key', () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => i);
  const other = key.slice();
  other[0] ^= 1;
  const a = pairCode('link-id', key, 'c2VhbGVk');
  assert.notEqual(pairCode('link-id', key, 'c2VhbGVl'), a);
  assert.notEqual(pairCode('link-id', other, 'c2VhbGVk'), a);
  assert.match(a, /^\d{3} \d{3}$/);
});
