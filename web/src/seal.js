// Sealing, as the host does it (rpc/seal.go, rpc/frame.go):
// XChaCha20-Poly1305 with a random 24-byte nonce; protocol 1's body =
// base64(nonce || ciphertext), protocol 2's binary frame = 0x02 || nonce ||
// ciphertext (the same seal, without base64); and a replay guard for what
// the host sends (60 s window, nonces remembered).
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';

const te = new TextEncoder();
const td = new TextDecoder('utf-8', { fatal: true });

export function b64encode(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

export function b64decode(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function b64urlEncode(bytes) {
  return b64encode(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function b64urlDecode(s) {
  let t = s.replace(/-/g, '+').replace(/_/g, '/');
  while (t.length % 4) t += '=';
  return b64decode(t);
}

export function randomBytes(n) {
  return crypto.getRandomValues(new Uint8Array(n));
}

// newNonce is 24 random bytes in base64url: 32 printable characters.
export function newNonce() {
  return b64urlEncode(randomBytes(24));
}

export function seal(key, plaintext, aad, nonce = randomBytes(24)) {
  const ct = xchacha20poly1305(key, nonce, te.encode(aad)).encrypt(te.encode(plaintext));
  const out = new Uint8Array(nonce.length + ct.length);
  out.set(nonce);
  out.set(ct, nonce.length);
  return b64encode(out);
}

// open returns the plaintext, or throws when the body does not open.
export function open(key, body, aad) {
  const raw = b64decode(body);
  if (raw.length < 24 + 16) throw new Error('short frame');
  const plain = xchacha20poly1305(key, raw.subarray(0, 24), te.encode(aad)).decrypt(raw.subarray(24));
  return td.decode(plain);
}

// FRAME_VERSION is a binary frame's first byte; MAX_FRAME its bound.
export const FRAME_VERSION = 2;
const MAX_FRAME = 256 << 10;

// sealFrame seals plaintext (a string) into a binary frame.
export function sealFrame(key, plaintext, aad, nonce = randomBytes(24)) {
  const ct = xchacha20poly1305(key, nonce, te.encode(aad)).encrypt(te.encode(plaintext));
  const out = new Uint8Array(1 + 24 + ct.length);
  out[0] = FRAME_VERSION;
  out.set(nonce, 1);
  out.set(ct, 25);
  return out;
}

// openFrame returns a binary frame's plaintext, or throws when it is not a
// frame of this version, is out of bounds, or does not open.
export function openFrame(key, frame, aad) {
  if (!(frame instanceof Uint8Array) || frame.length < 1 + 24 + 16 || frame.length > MAX_FRAME || frame[0] !== FRAME_VERSION) {
    throw new Error('not a frame');
  }
  const plain = xchacha20poly1305(key, frame.subarray(1, 25), te.encode(aad)).decrypt(frame.subarray(25));
  return td.decode(plain);
}

const WINDOW = 60_000;
const MAX_SEEN = 20_000;

// ReplayGuard refuses a message more than 60 s old or ahead, or whose
// nonce it saw inside that window.
export class ReplayGuard {
  constructor(now = () => Date.now()) {
    this.now = now;
    this.seen = new Map();
  }
  check(ts, nonce) {
    const now = this.now();
    if (typeof ts !== 'number' || typeof nonce !== 'string' || nonce.length < 16 || nonce.length > 64) return false;
    if (Math.abs(now - ts) > WINDOW) return false;
    for (const [n, t] of this.seen) {
      if (now - t <= WINDOW) break;
      this.seen.delete(n);
    }
    if (this.seen.has(nonce) || this.seen.size >= MAX_SEEN) return false;
    this.seen.set(nonce, now);
    return true;
  }
}
