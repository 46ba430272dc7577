// The page derives every key as the computer does: rpc/lan's vectors
// (testdata/agree-vectors.json, written by TestAgreeVectors) from the same
// fixed inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sha256 } from '@noble/hashes/sha2.js';
import { Handshake, lp, LABELS, reconnectKey, resumeKey, sessionKeys, ephemeral, callMAC, nextStored } from '../src/agree.js';

const v = JSON.parse(readFileSync(new URL('../../rpc/lan/testdata/agree-vectors.json', import.meta.url), 'utf8'));
const hex = (s) => Uint8Array.from(s.match(/../g), (b) => parseInt(b, 16));
const toHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const b64url = (b) => Buffer.from(b).toString('base64url');

test('the handshake matches the Go vectors', () => {
  const d = new Handshake(v.scope, hex(v.psk), v.name, v.kind, hex(v.a), hex(v.na));
  assert.equal(toHex(d.pkA), v.pkA);
  d.committed(hex(v.pkB), hex(v.commit));
  assert.equal(toHex(d.key), v.handshakeKey);
  d.opened(hex(v.nb));
  assert.equal(toHex(d.transcript()), v.transcript);
  assert.equal(d.code(), v.code);
  const out = d.outcome(v.deviceId);
  assert.equal(toHex(out.stored), v.stored);
  assert.equal(out.fingerprint, v.fingerprint);
  assert.equal(toHex(reconnectKey(out.stored, v.deviceId)), v.reconnectKey);
});

test('a nonce the commitment does not bind is refused', () => {
  const d = new Handshake(v.scope, hex(v.psk), v.name, v.kind, hex(v.a), hex(v.na));
  d.committed(hex(v.pkB), hex(v.commit));
  const other = hex(v.nb);
  other[0] ^= 1;
  assert.throws(() => d.opened(other), /commitment/);
});

test('resume and session keys match the Go vectors', () => {
  const stored = hex(v.stored);
  assert.equal(toHex(resumeKey(stored, 'stored', v.deviceId, '')), v.resumeKeyStored);
  assert.equal(toHex(resumeKey(hex(v.ticket), 'ticket', v.deviceId, 'tk1')), v.resumeKeyTicket);
  const e = ephemeral(hex(v.e));
  const h = ephemeral(hex(v.h));
  const ks = sessionKeys(e.shared(h.pub), stored, v.deviceId, v.sessionId, e.pub, h.pub);
  assert.equal(toHex(ks.key), v.sessionKey);
  assert.equal(toHex(ks.auth), v.sessionAuth);
  assert.equal(toHex(ks.ticket), v.sessionTicket);
  assert.equal(toHex(nextStored(hex(v.ticket), v.deviceId, 'run-1')), v.nextStored);
  assert.equal(b64url(callMAC(ks.auth, v.deviceId, v.sessionId, 1700000000000, 'nonce-abc')), v.callMAC);
});

test('lp tells lists of parts apart', () => {
  assert.notEqual(toHex(sha256(lp('ab', 'c'))), toHex(sha256(lp('a', 'bc'))));
  assert.equal(LABELS.code, 'gatehouse lan code v2');
});
