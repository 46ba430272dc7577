// Several computers from one page: the page served by computer A pairs
// with computer B through B's link (pasted on the projects screen), the
// person at B compares the code and allows it, and the page switches
// between the two, listing each one's projects and making a change on B
// that git on B shows. B answers the page only from A's origin: a third
// site and B's own page are refused with A's device.
//
// Two real serves on loopback, each on a port of its own, so their origins
// differ by port. Run by web/page_test.go (TestComputersInChromium).
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, basename } from 'node:path';
import { tmpdir } from 'node:os';
import { chromium } from 'playwright-core';
import { shots, axe, session, check, within } from './lib.mjs';

const { GATEHOUSE, REPO, STATE, ARTIFACTS, CHROMIUM } = process.env;
const s = session({ gatehouse: GATEHOUSE, repo: REPO, state: STATE, artifacts: ARTIFACTS });
const { step } = s;

// Computer B: a checkout of its own with a change to commit, its own state.
const root = mkdtempSync(join(tmpdir(), 'gatehouse-b-'));
const repoB = join(root, 'laptop-repo');
mkdirSync(repoB);
const git = (...args) => execFileSync('git', ['-C', repoB, ...args], { encoding: 'utf8' });
git('init', '-q', '-b', 'main');
writeFileSync(join(repoB, 'notes.txt'), 'one\n');
git('add', 'notes.txt');
git('-c', 'user.name=B', '-c', 'user.email=b@example.com', 'commit', '-q', '-m', 'first');
writeFileSync(join(repoB, 'notes.txt'), 'one\ntwo, from the phone\n');
const b = session({ gatehouse: GATEHOUSE, repo: repoB, state: join(root, 'state'), artifacts: ARTIFACTS });

async function screen(page, name) {
  await shots(page, name, ARTIFACTS);
  await axe(page, name);
}

// A third site: a page of its own at another origin.
function third() {
  const server = createServer((req, res) => { res.setHeader('Content-Type', 'text/html'); res.end('<!doctype html><title>third</title>'); });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }),
  })));
}

let browser;
let failure;
try {
  await s.started();
  await b.started();
  const linkB = b.gh('devices', 'link');
  const originB = new URL(linkB).origin;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  const originA = new URL(page.url()).origin;
  check(originA !== originB, `the two serves share an origin: ${originA}`);
  step(`paired with A at ${originA}; B serves at ${originB}`);

  // Add B by its link.
  await page.getByRole('button', { name: 'Add a computer', exact: true }).click();
  await page.getByLabel('The other computer\'s pairing link').waitFor();
  await screen(page, 'computers-add');
  await page.getByLabel('The other computer\'s pairing link').fill('http://example.invalid/not-a-link');
  await page.getByRole('button', { name: 'Pair with this computer', exact: true }).click();
  await page.getByText('That is not a gatehouse pairing link.').waitFor();
  await page.getByLabel('The other computer\'s pairing link').fill(linkB);
  await page.getByRole('button', { name: 'Pair with this computer', exact: true }).click();
  await page.getByText(`Waiting for ${new URL(originB).host} to allow this device`).waitFor();
  const code = (await page.locator('#pair-code').textContent()).replace(' ', '');
  await screen(page, 'computers-pairing');
  const waiting = b.gh('devices');
  check(waiting.includes(`through the page at ${originA}`), `B does not show the page the request came from:\n${waiting}`);
  b.gh('devices', 'allow', code, '--grant', 'full', '--wait', '20s');
  await page.getByRole('heading', { name: `Projects on ${new URL(originB).host}` }).waitFor({ timeout: 20000 });
  await page.getByRole('button', { name: /^laptop-repo\b/ }).waitFor();
  check(new URL(page.url()).hash === '#/c/1', `the address does not name computer 1: ${page.url()}`);
  const listed = b.gh('devices');
  check(listed.includes(`(from the page at ${originA})`), `B's device list does not show the pinned page:\n${listed}`);
  await screen(page, 'computers-list');
  step('B paired from A\'s page, by the code compared at B; its projects listed');

  // A change on B, from the page at A, checked with git on B.
  await page.getByRole('button', { name: /^laptop-repo\b/ }).click();
  await page.getByRole('button', { name: 'Stage all', exact: true }).click();
  await page.locator('.note', { hasText: /^Staged 1 files/ }).waitFor({ timeout: 30000 });
  await page.getByLabel('Commit message').fill('Committed on B from the page at A');
  await page.getByRole('button', { name: 'Commit', exact: true }).click();
  for (let i = 0; git('log', '-1', '--format=%s').trim() !== 'Committed on B from the page at A'; i++) {
    if (i > 300) throw new Error(`the commit did not reach B: ${git('log', '-1', '--format=%s')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  check(git('status', '--porcelain').trim() === '', `B's checkout is not clean after the commit:\n${git('status', '--porcelain')}`);
  check(/^#\/c\/1\/p\//.test(new URL(page.url()).hash), `the changes screen's address does not name computer 1: ${page.url()}`);
  step('committed on B from the page at A; git on B shows it');

  // Back to A, and its projects; then B again, without pairing again.
  await page.goBack();
  await page.getByRole('heading', { name: `Projects on ${new URL(originB).host}` }).waitFor();
  await page.getByRole('button', { name: new RegExp(`^${new URL(originA).host.replace(/\./g, '\\.')}`) }).click();
  await page.getByRole('heading', { name: `Projects on ${new URL(originA).host}` }).waitFor();
  await page.getByRole('button', { name: new RegExp(`^${basename(REPO)}\\b`) }).waitFor();
  check(await page.getByRole('button', { name: /^laptop-repo\b/ }).count() === 0, 'A lists B\'s project');
  await screen(page, 'computers-switch');
  await page.getByRole('button', { name: new RegExp(`^${new URL(originB).host.replace(/\./g, '\\.')}`) }).click();
  await page.getByRole('button', { name: /^laptop-repo\b/ }).waitFor();
  step('switched from B to A and back, each listing its own projects');

  // What A's storage holds for B: its own record, with its own device.
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem(`gatehouse-computers:${location.host}`)));
  const recB = stored.computers[0];
  check(stored.computers.length === 1 && recB.origin === originB && recB.deviceId.startsWith('lan-'), `A's storage for B: ${JSON.stringify(stored)}`);
  const own = await page.evaluate(() => JSON.parse(localStorage.getItem(`gatehouse:${location.host}`)));
  check(own.deviceId !== recB.deviceId, 'A and B share a device id');

  // A third site, and B's own page, with A's device for B: refused.
  const site = await third();
  const other = await within(30000, 'a new page', (await browser.newContext()).newPage());
  const ask = (origin) => other.evaluate(async ({ base, d }) => {
    try {
      const res = await fetch(`${base}/rc/resume?d=${encodeURIComponent(d)}`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ d, m: 'stored', f: 'x' }),
      });
      return `${res.status} ${(await res.json()).error}`;
    } catch (e) {
      return `refused by the browser: ${e.message}`;
    }
  }, { base: originB, d: recB.deviceId, origin });
  await other.goto(site.origin + '/');
  const fromThird = await ask(site.origin);
  check(fromThird.startsWith('refused by the browser'), `a third site reached B with A's device: ${fromThird}`);
  await other.goto(originB + '/');
  const fromB = await ask(originB);
  check(fromB.includes('This device was paired from another page'), `B's own page with A's device: ${fromB}`);
  await site.close();
  step('a third site and B\'s own page were refused with A\'s device');

  // A reload at B's screen: the page comes back to B, whose stored secret
  // opened its one session, so the person at B allows it again by its code.
  await page.getByRole('button', { name: /^laptop-repo\b/ }).click();
  await page.getByRole('button', { name: 'Stage all', exact: true }).waitFor();
  const at = page.url();
  await page.reload();
  await page.getByText('which it reaches from another computer\'s page, so the person at this computer must allow it again').waitFor({ timeout: 20000 });
  check(page.url() === at, `the reload left B's screen: ${page.url()} for ${at}`);
  await screen(page, 'computers-reconnect');
  const again = (await page.locator('#pair-code').textContent()).replace(' ', '');
  b.gh('devices', 'allow', again, '--wait', '20s');
  await page.getByRole('button', { name: 'Stage all', exact: true }).waitFor({ timeout: 20000 });
  await page.getByRole('heading', { name: 'laptop-repo' }).waitFor();
  step('a reload at B\'s screen came back to B after the person there allowed it by its code');

  // Forgetting B takes it off this page, which goes back to A.
  await page.locator('#back').click();
  await page.getByRole('heading', { name: `Projects on ${new URL(originB).host}` }).waitFor();
  await page.getByRole('button', { name: `Forget ${new URL(originB).host}`, exact: true }).click();
  await page.getByText(`${new URL(originB).host} was taken off this page.`).waitFor();
  await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
  await page.getByRole('button', { name: new RegExp(`^${basename(REPO)}\\b`) }).waitFor();
  check(page.dialogs.some((d) => d.startsWith(`Forget ${new URL(originB).host} on this page?`)), `no question before forgetting B: ${page.dialogs}`);
  const left = await page.evaluate(() => JSON.parse(localStorage.getItem(`gatehouse-computers:${location.host}`)));
  check(left.computers.length === 0, `B is still stored: ${JSON.stringify(left)}`);
  step('B forgotten on this page; A\'s projects again');
  console.log('ok: one page paired with two computers, switched between them, and committed on B');
} catch (e) {
  failure = e;
  console.error('B\'s serve said:\n' + b.out);
} finally {
  await s.end(browser, failure);
  await b.end(null);
}
