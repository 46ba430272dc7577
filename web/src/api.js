// The LAN transport, as rpc/lan serves it: pairing through the link, sealed
// calls, and sealed server-sent events.
import { sha256 } from '@noble/hashes/sha2.js';
import { seal, open, newNonce, b64urlDecode, ReplayGuard } from './seal.js';

export class Refusal extends Error {
  constructor(sentence, code) {
    super(sentence);
    this.code = code;
  }
}

async function postJSON(path, body, signal) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    cache: 'no-store',
    signal,
  });
  const out = await res.json().catch(() => ({}));
  if (!res.ok) throw new Refusal(out.error || `The computer answered ${res.status}.`, res.status === 403 ? 'UNPAIRED' : 'HTTP');
  return out;
}

// parseLink reads #pairingId.key from the page's address.
export function parseLink(hash) {
  const m = /^#([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(hash || '');
  if (!m) return null;
  return { id: m[1], key: b64urlDecode(m[2]) };
}

// pairCode is rpc/lan's PairCode: six digits from SHA-256 over the link
// (id and key) and the sealed hello as sent. The computer shows the same
// code beside the request, so the person can tell this device's request
// from another holder of the link's.
export function pairCode(linkId, key, sealedHello) {
  const te = new TextEncoder();
  const h = sha256.create();
  for (const part of [te.encode('gatehouse pair code v1\0'), key, te.encode(linkId), new Uint8Array([0]), te.encode(sealedHello)]) h.update(part);
  const n = new DataView(h.digest().buffer).getUint32(0) % 1_000_000;
  const d = String(n).padStart(6, '0');
  return `${d.slice(0, 3)} ${d.slice(3)}`;
}

// pair says hello through the link and waits for the person at the
// computer; onCode gets the pair code before the hello leaves. It returns
// { deviceId, key, grant }.
export async function pair(link, name, onCode = () => {}) {
  const hello = JSON.stringify({ type: 'hello', name, ts: Date.now(), nonce: newNonce() });
  const f = seal(link.key, hello, `pair:${link.id}|host`);
  onCode(pairCode(link.id, link.key, f));
  const out = await postJSON('/rc/hello', { p: link.id, f });
  const ans = JSON.parse(open(link.key, out.f, `pair:${link.id}|device`));
  if (!new ReplayGuard().check(ans.ts, ans.nonce)) throw new Refusal("That computer's reply was stale or repeated. Try again.");
  if (ans.type !== 'paired') throw new Refusal(ans.error || 'The computer did not pair this device.', 'REFUSED');
  return { deviceId: ans.deviceId, key: b64urlDecode(ans.deviceKey), grant: ans.grant };
}

// NOT_THE_COMPUTER is said when a reply is not sealed with this device's
// key: the page is pinned to the computer it paired with.
export const NOT_THE_COMPUTER = 'This reply did not come from the computer this device paired with, so it was ignored. Scan the code that gatehouse serve shows on your computer to pair again.';

// backoff is how long to wait before reopening the event stream after
// attempt failures in a row: doubling from 1 s up to 60 s, with jitter over
// the upper half, so pages that lost a computer do not all come back at
// the same instant (and never every 3 s for ever, as a browser's own
// EventSource retry would).
export function backoff(attempt, random = Math.random) {
  const cap = Math.min(60_000, 1000 * 2 ** Math.min(attempt, 16));
  return Math.round(cap / 2 + random() * (cap / 2));
}

let seq = 0;

export class Host {
  constructor(deviceId, key) {
    this.deviceId = deviceId;
    this.key = key;
    this.guard = new ReplayGuard();
  }

  // call runs one method and returns its result, or throws a Refusal with
  // the host's sentence.
  async call(method, params = {}, timeoutMs = 30_000) {
    const req = { type: 'req', id: `p${++seq}-${newNonce().slice(0, 8)}`, method, params, ts: Date.now(), nonce: newNonce() };
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), timeoutMs);
    let out;
    try {
      out = await postJSON('/rc/call', { d: this.deviceId, f: seal(this.key, JSON.stringify(req), `${this.deviceId}|host`) }, ctl.signal);
    } catch (e) {
      if (e.name === 'AbortError') throw new Refusal('That computer did not answer in time.', 'TIMEOUT');
      if (e instanceof Refusal) throw e;
      throw new Refusal('The computer could not be reached.', 'OFFLINE');
    } finally {
      clearTimeout(timer);
    }
    let res;
    try {
      res = JSON.parse(open(this.key, out.f, `${this.deviceId}|device`));
    } catch {
      // Only the computer this device paired with holds its key: whoever
      // answers at that address now (another program after a restart) is
      // not it, and nothing it sent is used.
      throw new Refusal(NOT_THE_COMPUTER, 'NOT_THE_COMPUTER');
    }
    if (res.type !== 'res' || res.id !== req.id || !this.guard.check(res.ts, res.nonce)) {
      throw new Refusal("That computer's reply was stale or repeated. Try again.", 'STALE');
    }
    if (!res.ok) throw new Refusal(res.error, res.code);
    return res.result;
  }

  // events opens the sealed event stream; onEvent gets host events,
  // onOpen when the stream is up, onEnd('ended' | 'unpaired' | 'lost')
  // when it stops. A dropped stream is not reopened by the browser (its
  // opener is sealed once, so a reopen would be a replay the host refuses):
  // the caller reopens it with a fresh one, when it chooses.
  events(onEvent, onEnd, onOpen = () => {}) {
    const opener = JSON.stringify({ type: 'req', id: 'events', method: 'events', ts: Date.now(), nonce: newNonce() });
    const f = seal(this.key, opener, `${this.deviceId}|host`);
    const es = new EventSource(`/rc/events?d=${encodeURIComponent(this.deviceId)}&f=${encodeURIComponent(f)}`);
    let done = false;
    const end = (why) => {
      if (done) return;
      done = true;
      es.close();
      onEnd(why);
    };
    es.onopen = () => onOpen();
    es.onmessage = (m) => {
      let ev;
      try {
        ev = JSON.parse(open(this.key, m.data, `${this.deviceId}|device`));
      } catch {
        return;
      }
      if (!this.guard.check(ev.ts, ev.nonce)) return;
      if (ev.type === 'ended' || ev.type === 'unpaired') end(ev.type);
      else if (ev.type === 'event') onEvent(ev);
    };
    es.onerror = () => end('lost');
    return () => end('closed');
  }
}
