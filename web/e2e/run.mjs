// The page end to end in headless Chromium, through the real pairing flow:
// gatehouse serve on loopback, the person at the computer allowing through
// 'gatehouse devices', then projects, a diff, staging and a commit in a real
// repository (checked with git), a live status update, a refusal of a secret
// file shown as a note, and the page told when serve stops. Screenshots at a
// phone's size go to $ARTIFACTS.
//
// Run by web/page_test.go (go test ./web/), which builds gatehouse and the
// repository and sets GATEHOUSE, REPO, STATE, ARTIFACTS and CHROMIUM.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const { GATEHOUSE, REPO, STATE, ARTIFACTS, CHROMIUM } = process.env;
const env = { ...process.env, GATEHOUSE_HOME: STATE };
const gh = (...args) => execFileSync(GATEHOUSE, args, { env, encoding: 'utf8' }).trim();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = Date.now();
const step = (what) => console.log(`${((Date.now() - t0) / 1000).toFixed(1)}s ${what}`);

function fail(msg) {
  console.error(`FAIL: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}

const serve = spawn(GATEHOUSE, ['serve', '--listen', 'loopback', '--no-tui', REPO], { env, stdio: ['ignore', 'pipe', 'pipe'] });
let serveOut = '';
serve.stdout.on('data', (d) => { serveOut += d; });
serve.stderr.on('data', (d) => { serveOut += d; });
const served = new Promise((r) => serve.on('exit', r));

let browser;
const pages = [];
try {
  for (let i = 0; !existsSync(join(STATE, 'control.sock')); i++) {
    if (i > 200) fail('serve did not start');
    await sleep(50);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const phone = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
  const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  // Pair with full access, through the real flow.
  const ctx = await browser.newContext(phone);
  const page = await ctx.newPage();
  pages.push(page);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(gh('devices', 'link'));
  await page.getByText('Waiting for the computer to allow this device').waitFor();
  const code = await page.locator('#pair-code').textContent();
  if (!/^\d{3} \d{3}$/.test(code || '')) fail(`the page shows no pair code: ${code}`);
  await shot(page, '1-pairing');
  step('pairing asked');
  if (page.url().includes('#')) fail('the link key stayed in the address bar');
  gh('devices', 'allow', '--grant', 'full', '--wait', '20s');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await shot(page, '2-projects');
  step('paired, projects');

  // A checkout's status and a file's diff.
  await page.getByRole('button', { name: /repo/ }).click();
  await page.getByRole('heading', { name: /Not staged/ }).waitFor();
  await page.getByRole('button', { name: /a\.txt/ }).click();
  await page.locator('pre .add', { hasText: '+changed from the phone test' }).waitFor();
  await shot(page, '3-diff');
  if ((await page.locator('main').innerText()).includes('null')) fail('the diff view shows "null"');
  step('diff');
  await page.getByRole('button', { name: 'Back' }).click();

  // Live status: a file made on the computer appears without a reload.
  writeFileSync(join(REPO, 'live.txt'), 'made on the computer\n');
  await page.getByRole('button', { name: /live\.txt/ }).waitFor({ timeout: 15000 });
  step('live update');

  // Stage and commit, then check with git.
  await page.getByRole('listitem').filter({ hasText: 'a.txt' }).getByRole('button', { name: 'Stage' }).click();
  await page.getByRole('heading', { name: 'Staged (1)', exact: true }).waitFor();
  await page.getByLabel('Commit message').fill('Committed from the phone page');
  await page.getByRole('button', { name: 'Commit', exact: true }).click();
  await page.getByText(/^Committed [0-9a-f]{8}/).waitFor();
  await shot(page, '4-committed');
  step('committed');
  const subject = execFileSync('git', ['-C', REPO, 'log', '-1', '--format=%s'], { encoding: 'utf8' }).trim();
  if (subject !== 'Committed from the phone page') fail(`git log says ${JSON.stringify(subject)}`);

  // A second phone with view access: the secret file is refused, as a note,
  // and what view may not do is explained up front.
  const ctx2 = await browser.newContext(phone);
  const page2 = await ctx2.newPage();
  pages.push(page2);
  await page2.goto(gh('devices', 'link'));
  await page2.getByText('Waiting for the computer to allow this device').waitFor();
  gh('devices', 'allow', '--grant', 'view', '--wait', '20s');
  await page2.getByRole('button', { name: /repo/ }).click();
  await page2.getByText(/does not allow this\. The person at the computer can give this device full access/).waitFor();
  await page2.getByRole('tab', { name: 'Files' }).click();
  await page2.getByRole('button', { name: /\.env/ }).click();
  await page2.locator('.note', { hasText: 'This file may hold secrets. Give this phone Full access on the computer to open it.' }).waitFor();
  await shot(page2, '5-secret-refused');
  step('secret refused');

  // serve stops: the pages are told.
  serve.kill('SIGINT');
  await page.getByText('gatehouse stopped serving on the computer').waitFor({ timeout: 15000 });
  await shot(page, '6-ended');
  step('ended');
  if (errors.length) fail(`the page logged errors: ${errors.join('; ')}`);
  console.log('ok: paired, diffed, staged, committed, live, refused, ended');
} catch (e) {
  if (!process.exitCode) {
    console.error(e);
    process.exitCode = 1;
  }
  console.error('serve said:\n' + serveOut);
  for (const [i, p] of pages.entries()) {
    await p.screenshot({ path: join(ARTIFACTS, `failure-${i + 1}.png`), fullPage: true }).catch(() => {});
  }
} finally {
  if (browser) await browser.close();
  serve.kill('SIGINT');
  await served;
}
