// The page is pinned to the computer it paired with: only the computer
// that holds this device's secret can answer its resume, and only the
// session that resume agreed can answer its calls. Whatever else answers at
// the address (another program after serve stopped) is refused with a
// sentence, and nothing it sent is used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Host, Refusal, NOT_THE_COMPUTER } from '../src/api.js';
import { seal, open, b64urlEncode, b64urlDecode } from '../src/seal.js';
import { resumeKey, sessionKeys, ephemeral } from '../src/agree.js';

// computer answers a resume and calls as rpc/lan does, holding secret; a
// forger answers with keys of its own.
function computer(secret, deviceId, { forge = false, ahead = 0 } = {}) {
  let keys;
  globalThis.fetch = async (path, init) => {
    const body = JSON.parse(init.body);
    if (path === '/rc/resume') {
      const key = forge ? new Uint8Array(32).fill(9) : resumeKey(secret, 'stored', deviceId, '');
      const m = JSON.parse(open(resumeKey(secret, 'stored', deviceId, ''), body.f, `resume:${deviceId}|stored||host`));
      const h = ephemeral();
      keys = sessionKeys(h.shared(b64urlDecode(m.pk)), secret, deviceId, 's1', b64urlDecode(m.pk), h.pub);
      const ans = { type: 'session', s: 's1', pk: b64urlEncode(h.pub), re: m.nonce, grant: 'view', name: 'x', device: deviceId, ts: Date.now() + ahead, nonce: 'n'.repeat(32) };
      return new Response(JSON.stringify({ f: seal(key, JSON.stringify(ans), `resume:${deviceId}|stored||device`) }), { status: 200 });
    }
    const req = JSON.parse(open(keys.key, body.f, `${deviceId}|s1|host`));
    const res = { type: 'res', id: req.id, ok: true, result: { access: 'view' }, ts: Date.now() + ahead, nonce: 'm'.repeat(32) + Math.random() };
    return new Response(JSON.stringify({ f: seal(keys.key, JSON.stringify(res), `${deviceId}|s1|device`) }), { status: 200 });
  };
}

test('the computer holding the secret is answered', async () => {
  const stored = new Uint8Array(32).fill(7);
  computer(stored, 'lan-1');
  assert.deepEqual(await new Host({ deviceId: 'lan-1', stored }).call('host.hello'), { access: 'view' });
});

test('an answer sealed with another key is refused', async () => {
  const stored = new Uint8Array(32).fill(7);
  computer(stored, 'lan-1', { forge: true });
  await assert.rejects(new Host({ deviceId: 'lan-1', stored }).call('host.hello'), (e) => e instanceof Refusal && e.code === 'NOT_THE_COMPUTER' && e.message === NOT_THE_COMPUTER);
});

// A phone whose clock is two minutes off the computer's takes the
// computer's clock from its answers and checks replies against it (it used
// to check them against its own, refuse every reply as stale, and wipe its
// pairing).
test('a reply stamped by a computer two minutes ahead is used', async () => {
  const stored = new Uint8Array(32).fill(7);
  computer(stored, 'lan-1', { ahead: 120_000 });
  assert.deepEqual(await new Host({ deviceId: 'lan-1', stored }).call('host.hello'), { access: 'view' });
});
