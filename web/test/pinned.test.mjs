// The page is pinned to the computer it paired with: a reply not sealed
// with this device's key (another program answering at the address after
// serve restarted) is refused with a sentence, and nothing in it is used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Host, Refusal, NOT_THE_COMPUTER } from '../src/api.js';
import { seal, open } from '../src/seal.js';

function answerWith(key, deviceId) {
  globalThis.fetch = async (_path, init) => {
    const req = JSON.parse(open(key.paired, JSON.parse(init.body).f, `${deviceId}|host`));
    const res = JSON.stringify({ type: 'res', id: req.id, ok: true, result: { access: 'full' }, ts: Date.now(), nonce: 'n'.repeat(32) + Math.random() });
    return new Response(JSON.stringify({ f: seal(key.answers, res, `${deviceId}|device`) }), { status: 200 });
  };
}

test('a reply sealed with the paired key is used', async () => {
  const k = new Uint8Array(32).fill(7);
  answerWith({ paired: k, answers: k }, 'lan-1');
  assert.deepEqual(await new Host('lan-1', k).call('host.hello'), { access: 'full' });
});

test('a reply sealed with another key is refused', async () => {
  const k = new Uint8Array(32).fill(7);
  const other = new Uint8Array(32).fill(8);
  answerWith({ paired: k, answers: other }, 'lan-1');
  await assert.rejects(new Host('lan-1', k).call('host.hello'), (e) => e instanceof Refusal && e.code === 'NOT_THE_COMPUTER' && e.message === NOT_THE_COMPUTER);
});
