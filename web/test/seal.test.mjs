// The page seals exactly as the host does: the Go test vectors
// (rpc/testdata/vectors.json) through @noble/ciphers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { seal, open, sealFrame, openFrame, ReplayGuard, newNonce } from '../src/seal.js';

const vectors = JSON.parse(readFileSync(new URL('../../rpc/testdata/vectors.json', import.meta.url)));
const hex = (s) => Uint8Array.from(s.match(/../g) || [], (b) => parseInt(b, 16));

test('seal matches the Go vectors', () => {
  assert.ok(vectors.Seal.length >= 3);
  for (const v of vectors.Seal) {
    assert.equal(seal(hex(v.Key), v.Plaintext, v.AAD, hex(v.Nonce)), v.Body);
    assert.equal(open(hex(v.Key), v.Body, v.AAD), v.Plaintext);
  }
});

test('open refuses a changed byte, another key and other additional data', () => {
  const v = vectors.Seal[0];
  const raw = Buffer.from(v.Body, 'base64');
  raw[30] ^= 1;
  assert.throws(() => open(hex(v.Key), raw.toString('base64'), v.AAD));
  const other = hex(v.Key);
  other[0] ^= 1;
  assert.throws(() => open(other, v.Body, v.AAD));
  assert.throws(() => open(hex(v.Key), v.Body, 'host-a|phone-b'));
});

test('the replay guard refuses stale, future and repeated messages', () => {
  let now = 1_000_000;
  const g = new ReplayGuard(() => now);
  const n = newNonce();
  assert.equal(n.length, 32);
  assert.ok(g.check(now, n));
  assert.ok(!g.check(now, n), 'a repeated nonce');
  assert.ok(!g.check(now - 61_000, newNonce()), 'a stale message');
  assert.ok(!g.check(now + 61_000, newNonce()), 'a message from the future');
  assert.ok(!g.check(now, 'short'), 'a short nonce');
  now += 120_000;
  assert.ok(g.check(now, newNonce()));
});

test('sealFrame matches the Go vectors (protocol 2)', () => {
  for (const v of vectors.Seal) {
    const frame = sealFrame(hex(v.Key), v.Plaintext, v.AAD, hex(v.Nonce));
    assert.deepEqual(frame, hex(v.Frame));
    assert.equal(openFrame(hex(v.Key), hex(v.Frame), v.AAD), v.Plaintext);
    // The same seal as protocol 1's body: only the carrying differs.
    assert.equal(Buffer.from(frame.subarray(1)).toString('base64'), v.Body);
  }
});

test('openFrame refuses another version, a changed byte, bad bounds and other additional data', () => {
  const v = vectors.Seal[0];
  const f = hex(v.Frame);
  const changed = f.slice();
  changed[30] ^= 1;
  assert.throws(() => openFrame(hex(v.Key), changed, v.AAD));
  const v1 = f.slice();
  v1[0] = 1;
  assert.throws(() => openFrame(hex(v.Key), v1, v.AAD));
  assert.throws(() => openFrame(hex(v.Key), f.subarray(0, 40), v.AAD));
  assert.throws(() => openFrame(hex(v.Key), new Uint8Array(256 * 1024 + 1).fill(2), v.AAD));
  assert.throws(() => openFrame(hex(v.Key), f, 'host-a|phone-b'));
  assert.throws(() => open(hex(v.Key), Buffer.from(f).toString('latin1'), v.AAD), 'a protocol-1 open reads no frame');
});
