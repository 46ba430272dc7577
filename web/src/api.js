// The LAN transport, as rpc/lan serves it: pairing by a handshake with a
// compared code, sessions opened with a fresh key exchange, sealed calls,
// and sealed server-sent events. No key ever travels (agree.js).
//
// What this page keeps: in the browser's storage, its device id and its
// stored secret, which is good only in the serve run that gave it
// (whatever answers at this address while serve is stopped can read that
// storage, and learns nothing it can use); in memory only, its ticket,
// which resumes it after serve restarts while the page stays open, and its
// session. docs/lan.md has the whole protocol and its threat model.
import { seal, open, sealFrame, openFrame, newNonce, b64urlDecode, b64urlEncode, ReplayGuard } from './seal.js';
import { Handshake, reconnectKey, resumeKey, sessionKeys, ephemeral, callMAC, nextStored } from './agree.js';

export class Refusal extends Error {
  constructor(sentence, code, now) {
    super(sentence);
    this.code = code;
    this.now = now;
  }
}

// The computer's refusal codes, as the page branches on them.
const CODES = { unpaired: 'UNPAIRED', restarted: 'RESTARTED', moved: 'MOVED', session: 'SESSION', ticket: 'TICKET', clock: 'CLOCK', gone: 'GONE', busy: 'BUSY', full: 'FULL', page: 'PAGE' };

// NOT_THE_COMPUTER is said when an answer is not sealed with this device's
// keys: the page is pinned to the computer it paired with.
export const NOT_THE_COMPUTER = 'This reply did not come from the computer this device paired with, so it was ignored. Scan the code that gatehouse serve shows on your computer to pair again.';

// A computer is reached at base: '' for the one that served this page, or
// another computer's origin (http://addr:port), which this page calls
// cross-origin (docs/lan.md, "Several computers").

// clockOf is this page's idea of a computer's time: a refusal for a stamp
// out of its window carries the computer's clock.
const clocks = new Map();
function clockOf(base) {
  let c = clocks.get(base);
  if (!c) {
    c = { skew: 0, now: () => Date.now() + c.skew };
    clocks.set(base, c);
  }
  return c;
}

// FRAME_TYPE is the content type of a call's binary frame (protocol 2),
// sent once the computer has shown it reads them, and of its answer to a
// call that announced protocol 2 (p: 2 in the request).
const FRAME_TYPE = 'application/octet-stream';

// postJSON posts body (an object as JSON, or a binary frame) and returns
// the answer: its JSON, or { frame } when the computer answered with a
// binary frame.
async function postJSON(base, path, body, { signal, headers = {} } = {}) {
  const clock = clockOf(base);
  const binary = body instanceof Uint8Array;
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'Content-Type': binary ? FRAME_TYPE : 'application/json', ...headers },
    body: binary ? body : JSON.stringify(body),
    cache: 'no-store',
    signal,
  });
  if (res.ok && res.headers.get('Content-Type') === FRAME_TYPE) {
    return { frame: new Uint8Array(await res.arrayBuffer()) };
  }
  const out = await res.json().catch(() => ({}));
  if (!res.ok) {
    // The next stamp goes a millisecond past the computer's clock: one in the
    // very millisecond serve started is refused.
    if (out.code === 'clock' && typeof out.now === 'number') clock.skew = out.now + 1 - Date.now();
    const code = CODES[out.code] || (res.status === 403 ? 'UNPAIRED' : 'HTTP');
    throw new Refusal(out.error || `The computer answered ${res.status}.`, code, out.now);
  }
  return out;
}

// postFresh sends a message stamped now, and once more stamped with the
// computer's clock when it says this page's clock is off.
async function postFresh(base, path, make, opts) {
  const clock = clockOf(base);
  try {
    return await postJSON(base, path, make(clock.now()), opts);
  } catch (e) {
    if (!(e instanceof Refusal) || e.code !== 'CLOCK') throw e;
    return postJSON(base, path, make(clock.now()), opts);
  }
}

// parseLink reads #pairingId.key from the page's address.
export function parseLink(hash) {
  const m = /^#([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(hash || '');
  if (!m) return null;
  return { id: m[1], key: b64urlDecode(m[2]) };
}

// parseComputerLink reads another computer's pairing link (what its serve
// prints and shows as a QR code): { base, id, key }, or null.
export function parseComputerLink(text) {
  let u;
  try {
    u = new URL(String(text || '').trim());
  } catch {
    return null;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || (u.pathname !== '/' && u.pathname !== '')) return null;
  const link = parseLink(u.hash);
  return link && { base: u.origin, ...link };
}

// step sends one handshake message sealed with key under scope and opens
// the answer, which must name the message's nonce.
async function step(base, key, scope, body, msg) {
  let sent;
  const out = await postFresh(base, '/rc/pair', (ts) => {
    const m = { ...msg, ts, nonce: newNonce() };
    sent = m.nonce;
    return { ...body, f: seal(key, JSON.stringify(m), `pair:${scope}|host`) };
  });
  let ans;
  try {
    ans = JSON.parse(open(key, out.f, `pair:${scope}|device`));
  } catch {
    throw new Refusal(NOT_THE_COMPUTER, 'NOT_THE_COMPUTER');
  }
  if (ans.re !== sent) throw new Refusal("That computer's reply was stale or repeated. Try again.", 'STALE');
  return ans;
}

// handshake runs a pairing or reconnect: start, reveal (onCode gets the
// code to compare), wait for the person at the computer.
async function handshake(base, scope, psk, first, name, onCode) {
  const hs = new Handshake(scope, psk, name, 'page');
  const offer = await step(base, psk, scope, first, { type: 'pair.start', name, kind: 'page', pk: b64urlEncode(hs.pkA) });
  try {
    if (offer.type !== 'pair.offer') throw new Error('not an offer');
    hs.committed(b64urlDecode(offer.pk), b64urlDecode(offer.c));
  } catch {
    throw new Refusal(NOT_THE_COMPUTER, 'NOT_THE_COMPUTER');
  }
  const nonce = await step(base, hs.key, offer.h, { h: offer.h }, { type: 'pair.reveal', na: b64urlEncode(hs.na) });
  try {
    hs.opened(b64urlDecode(nonce.nb));
  } catch {
    throw new Refusal(NOT_THE_COMPUTER, 'NOT_THE_COMPUTER');
  }
  onCode(hs.code());
  const done = await step(base, hs.key, offer.h, { h: offer.h }, { type: 'pair.wait' });
  if (done.type !== 'paired') throw new Refusal(done.error || 'The computer did not pair this device.', 'REFUSED');
  return { deviceId: done.device, stored: hs.outcome(done.device).stored, grant: done.grant };
}

// pair pairs this page through the link (with link.base, another
// computer's); onCode gets the pair code, which the computer shows beside
// the request. It returns { deviceId, stored, grant }.
export function pair(link, name, onCode = () => {}) {
  return handshake(link.base || '', `link:${link.id}`, link.key, { p: link.id }, name, onCode);
}

// reconnect asks the computer to allow this paired device again after a
// restart cost it its ticket; its grant stays. onCode gets the code.
export async function reconnect(dev, name, onCode = () => {}) {
  const out = await handshake(dev.base || '', `device:${dev.deviceId}`, reconnectKey(dev.stored, dev.deviceId), { d: dev.deviceId }, name, onCode);
  if (out.deviceId !== dev.deviceId) throw new Refusal(NOT_THE_COMPUTER, 'NOT_THE_COMPUTER');
  return out;
}

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

// Host is this page's tie to a computer: the paired device (its id and
// stored secret, and dev.base, the computer's origin when it is not the
// one that served this page), its ticket and its session. onStored gets a
// new stored secret to keep in place of the old.
export class Host {
  constructor(dev, { onStored = () => {}, load = () => null } = {}) {
    this.dev = dev;
    this.base = dev.base || '';
    const clock = clockOf(this.base);
    this.onStored = onStored;
    this.load = load; // the pairing as the browser's storage holds it now
    this.ticket = null;
    this.session = null;
    this.guard = new ReplayGuard(clock.now); // the computer's clock, as this page stamps with it
    this.binary = false; // the computer reads binary frames (protocol 2): its host.hello said so, or it answered in one
  }

  // open opens a session: with the ticket this page holds, else with the
  // stored secret. A refusal says why it cannot: UNPAIRED, RESTARTED (the
  // person at the computer must allow this device again: reconnect),
  // MOVED, NOT_THE_COMPUTER.
  async open() {
    this.session = null;
    this.binary = false; // the computer may have restarted as another version: its next answer says again
    if (this.ticket) {
      try {
        return await this.resume('ticket', this.ticket.secret, this.ticket.id);
      } catch (e) {
        if (!(e instanceof Refusal) || e.code !== 'TICKET') throw e;
        this.ticket = null;
      }
    }
    // Another tab may have changed the stored secret since this one read it.
    const now = this.load();
    if (now && now.deviceId === this.dev.deviceId) this.dev = now;
    return this.resume('stored', this.dev.stored, '');
  }

  async resume(mode, secret, ticketId) {
    const { deviceId } = this.dev;
    const key = resumeKey(secret, mode, deviceId, ticketId);
    let e;
    let sent;
    // To another computer the address names the device too: it answers a
    // preflight only for a device paired from this page's origin.
    const path = this.base ? `/rc/resume?d=${encodeURIComponent(deviceId)}` : '/rc/resume';
    const out = await postFresh(this.base, path, (ts) => {
      e = ephemeral();
      sent = newNonce();
      const m = JSON.stringify({ type: 'resume', pk: b64urlEncode(e.pub), ts, nonce: sent });
      return { d: deviceId, m: mode, t: ticketId || undefined, f: seal(key, m, `resume:${deviceId}|${mode}|${ticketId}|host`) };
    });
    let ans;
    let keys;
    try {
      ans = JSON.parse(open(key, out.f, `resume:${deviceId}|${mode}|${ticketId}|device`));
      if (ans.type !== 'session' || ans.re !== sent || ans.device !== deviceId) throw new Error('not this resume');
      const pkH = b64urlDecode(ans.pk);
      keys = sessionKeys(e.shared(pkH), secret, deviceId, ans.s, e.pub, pkH);
    } catch {
      throw new Refusal(NOT_THE_COMPUTER, 'NOT_THE_COMPUTER');
    }
    const clock = clockOf(this.base);
    if (Math.abs(clock.now() - ans.ts) > 1_000) clock.skew = ans.ts - Date.now();
    if (ans.rotate && mode === 'ticket') {
      const stored = nextStored(secret, deviceId, ans.run);
      this.dev = { ...this.dev, stored };
      this.onStored(stored);
    }
    this.ticket = { id: ans.s, secret: keys.ticket };
    this.session = { id: ans.s, keys, grant: ans.grant };
    return this.session;
  }

  // call runs one method and returns its result, or throws a Refusal with
  // the host's sentence. A session the computer no longer has (it
  // restarted) is opened again once, with the ticket.
  async call(method, params = {}, timeoutMs = 30_000) {
    for (let attempt = 0; ; attempt++) {
      try {
        if (!this.session) await this.open();
        const result = await this.send(method, params, timeoutMs);
        if (method === 'host.hello' && result && result.protocol >= 2) this.binary = true;
        return result;
      } catch (e) {
        if (!(e instanceof Refusal) || e.code !== 'SESSION' || attempt > 0) throw e;
        this.session = null;
      }
    }
  }

  async send(method, params, timeoutMs) {
    const se = this.session;
    const d = this.dev.deviceId;
    const clock = clockOf(this.base);
    // p: 2 announces protocol 2: the computer may answer with a binary frame.
    const req = { type: 'req', id: `p${++seq}-${newNonce().slice(0, 8)}`, method, params, ts: clock.now(), nonce: newNonce(), p: 2 };
    const ts = clock.now();
    const nonce = newNonce().slice(0, 22);
    const auth = `${ts}.${nonce}.${b64urlEncode(callMAC(se.keys.auth, d, se.id, ts, nonce))}`;
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), timeoutMs);
    let out;
    try {
      const aad = `${d}|${se.id}|host`;
      const body = this.binary ? sealFrame(se.keys.key, JSON.stringify(req), aad) : { f: seal(se.keys.key, JSON.stringify(req), aad) };
      out = await postJSON(this.base, `/rc/call?d=${encodeURIComponent(d)}&s=${encodeURIComponent(se.id)}`,
        body, { signal: ctl.signal, headers: { 'X-Gatehouse-Auth': auth } });
    } catch (e) {
      if (e.name === 'AbortError') throw new Refusal('That computer did not answer in time.', 'TIMEOUT');
      if (e instanceof Refusal) throw e;
      throw new Refusal('The computer could not be reached.', 'OFFLINE');
    } finally {
      clearTimeout(timer);
    }
    let res;
    try {
      const aad = `${d}|${se.id}|device`;
      res = JSON.parse(out.frame ? openFrame(se.keys.key, out.frame, aad) : open(se.keys.key, out.f, aad));
      if (out.frame) this.binary = true; // it answered in a binary frame that opened: it reads them too
    } catch {
      // Only the computer this device paired with could agree this
      // session's key: whatever answers at this address now is not it.
      throw new Refusal(NOT_THE_COMPUTER, 'NOT_THE_COMPUTER');
    }
    if (res.type !== 'res' || res.id !== req.id || !this.guard.check(res.ts, res.nonce)) {
      throw new Refusal("That computer's reply was stale or repeated. Try again.", 'STALE');
    }
    if (!res.ok) throw new Refusal(res.error, res.code);
    return res.result;
  }

  // events opens the session's sealed event stream; onEvent gets host
  // events, onOpen when the stream is up, onEnd('ended' | 'unpaired' |
  // 'lost') when it stops. A dropped stream is not reopened by the browser
  // (its opener is sealed once, so a reopen would be a replay the host
  // refuses): the caller opens the session again and reopens it, when it
  // chooses.
  events(onEvent, onEnd, onOpen = () => {}) {
    const se = this.session;
    const d = this.dev.deviceId;
    const opener = JSON.stringify({ type: 'req', id: 'events', method: 'events', ts: clockOf(this.base).now(), nonce: newNonce() });
    const f = seal(se.keys.key, opener, `${d}|${se.id}|events`);
    const es = new EventSource(`${this.base}/rc/events?d=${encodeURIComponent(d)}&s=${encodeURIComponent(se.id)}&f=${encodeURIComponent(f)}`);
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
        ev = JSON.parse(open(se.keys.key, m.data, `${d}|${se.id}|device`));
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
