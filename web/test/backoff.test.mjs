// The event stream's reconnection waits grow from about a second to a
// minute and are spread by jitter, rather than a fixed 3 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoff } from '../src/api.js';

test('backoff doubles up to a minute, jittered over the upper half', () => {
  const lows = [];
  const highs = [];
  for (let a = 0; a < 12; a++) {
    lows.push(backoff(a, () => 0));
    highs.push(backoff(a, () => 1));
  }
  assert.deepEqual(lows.slice(0, 4), [500, 1000, 2000, 4000]);
  assert.deepEqual(highs.slice(0, 4), [1000, 2000, 4000, 8000]);
  assert.equal(highs[11], 60_000);
  assert.equal(lows[11], 30_000);
  assert.equal(backoff(1e9, () => 1), 60_000);
  const spread = new Set(Array.from({ length: 50 }, () => backoff(5)));
  assert.ok(spread.size > 40, 'waits are jittered');
});
