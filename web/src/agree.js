// Key agreement as the computer does it (rpc/lan/agree.go): the pairing
// handshake with its compared code, and the keys a session derives. No key
// ever travels: both sides derive them from X25519 exchanges of fresh keys.
// rpc/lan/testdata/agree-vectors.json holds the Go side's answers for fixed
// inputs, and test/agree.test.mjs checks this file gives the same.
import { x25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { hmac } from '@noble/hashes/hmac.js';
import { extract, expand } from '@noble/hashes/hkdf.js';
import { randomBytes } from './seal.js';

const te = new TextEncoder();

export const LABELS = {
  handshake: 'gatehouse lan handshake v2',
  commit: 'gatehouse lan commit v2',
  transcript: 'gatehouse lan transcript v2',
  code: 'gatehouse lan code v2',
  stored: 'gatehouse lan stored v2',
  device: 'gatehouse lan device v2',
  reconnect: 'gatehouse lan reconnect v2',
  resume: 'gatehouse lan resume v2',
  session: 'gatehouse lan session v2',
  auth: 'gatehouse lan auth v2',
  ticket: 'gatehouse lan ticket v2',
  nextStored: 'gatehouse lan next stored v2',
};

const bytes = (v) => (typeof v === 'string' ? te.encode(v) : v);

// lp is the length-prefixed encoding every derivation hashes: each part as
// its 4-byte big-endian length and its bytes.
export function lp(...parts) {
  const bs = parts.map(bytes);
  const out = new Uint8Array(bs.reduce((n, b) => n + 4 + b.length, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const b of bs) {
    view.setUint32(at, b.length);
    out.set(b, at + 4);
    at += 4 + b.length;
  }
  return out;
}

// derive is HKDF-SHA256(ikm, salt) with the parts as info, 32 bytes.
export function derive(ikm, salt, ...info) {
  return expand(sha256, extract(sha256, ikm, salt && salt.length ? salt : new Uint8Array(32)), lp(...info), 32);
}

function exchange(priv, theirs) {
  const dh = x25519.getSharedSecret(priv, theirs);
  if (dh.every((b) => b === 0)) throw new Error('not an X25519 public key');
  return dh;
}

function same(a, b) {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

// Handshake is the device's side of a pairing or reconnect: scope names
// what psk belongs to ("link:ID" or "device:ID"). priv and na are given
// only by tests.
export class Handshake {
  constructor(scope, psk, name, kind, priv = x25519.utils.randomSecretKey(), na = randomBytes(32)) {
    Object.assign(this, { scope, psk, name, kind, priv, na });
    this.pkA = x25519.getPublicKey(priv);
  }

  // committed takes the computer's key and commitment.
  committed(pkB, commit) {
    if (commit.length !== 32) throw new Error('a commitment is 32 bytes');
    this.pkB = pkB;
    this.commit = commit;
    this.dh = exchange(this.priv, pkB);
    this.key = derive(this.dh, this.psk, LABELS.handshake, this.scope, this.pkA, pkB);
  }

  // opened checks the computer's nonce against its commitment: a nonce
  // chosen after seeing this device's is refused here.
  opened(nb) {
    if (!same(sha256(lp(LABELS.commit, this.pkB, this.pkA, nb)), this.commit)) throw new Error("the computer's nonce does not match its commitment");
    this.nb = nb;
  }

  transcript() {
    return sha256(lp(LABELS.transcript, this.scope, this.name, this.kind, this.pkA, this.pkB, this.commit, this.na, this.nb));
  }

  // code is the six digits the person compares, as "123 456".
  code() {
    const c = sha256(lp(LABELS.code, this.transcript()));
    const n = new DataView(c.buffer, c.byteOffset).getUint32(0) % 1_000_000;
    const d = String(n).padStart(6, '0');
    return `${d.slice(0, 3)} ${d.slice(3)}`;
  }

  // outcome is the device's stored secret and fingerprint, once allowed.
  outcome(deviceId) {
    const tr = this.transcript();
    const fp = sha256(lp(LABELS.device, tr, deviceId)).slice(0, 16);
    return { stored: derive(this.dh, this.psk, LABELS.stored, tr, deviceId), fingerprint: Array.from(fp, (b) => b.toString(16).padStart(2, '0')).join('') };
  }
}

// reconnectKey seals a reconnect's first message.
export function reconnectKey(stored, deviceId) {
  return derive(stored, null, LABELS.reconnect, deviceId);
}

// resumeKey seals a resume and its answer under the secret for mode
// ("stored", or "ticket" with its id).
export function resumeKey(secret, mode, deviceId, ticketId) {
  return derive(secret, null, LABELS.resume, mode, deviceId, ticketId || '');
}

// sessionKeys derives a session's keys from its exchange, salted with the
// secret that authenticated the resume.
export function sessionKeys(dh, secret, deviceId, sessionId, pkE, pkH) {
  const prk = extract(sha256, dh, secret);
  const ex = (label) => expand(sha256, prk, lp(label, deviceId, sessionId, pkE, pkH), 32);
  return { key: ex(LABELS.session), auth: ex(LABELS.auth), ticket: ex(LABELS.ticket) };
}

// nextStored is the stored secret a ticket gives at the first resume of a
// serve run (run names it): derived from the ticket, which only this page
// holds, so it is derived again if the answer that said so was lost.
export function nextStored(ticket, deviceId, run) {
  return derive(ticket, null, LABELS.nextStored, deviceId, run);
}

// ephemeral is a fresh X25519 key pair for a resume.
export function ephemeral(priv = x25519.utils.randomSecretKey()) {
  return { priv, pub: x25519.getPublicKey(priv), shared: (theirs) => exchange(priv, theirs) };
}

// callMAC authenticates a call's headers before its body.
export function callMAC(auth, deviceId, sessionId, ts, nonce) {
  return hmac(sha256, auth, lp('call', deviceId, sessionId, String(ts), nonce)).slice(0, 16);
}
