// The changes screen as a newcomer meets it (CHANGELOG.md), in headless Chromium against a
// real gatehouse serve and repository (the one page_test.go's pageRepo
// makes: an untracked .env, sixty new files in many/, no remote), each
// result checked with git:
//
//   - a secret file keeps its mark at every grant, full included; "Stage
//     all" at full leaves it out and says so; staging it on its own row
//     asks first, naming it; committing with it staged asks first, and
//     saying no commits nothing;
//   - sixty new files in one folder are one row, "many/ (60 new files)",
//     that opens in place, and the commit form is in the first screenful;
//   - Fetch, Pull and Push with no remote are disabled and say why beside
//     them, and what the grant does not allow says "needs full access"
//     (control) or "needs control access" (view) beside the button.
//
// Each state is photographed at 320, 390 and 768 px in light and dark and
// checked with axe-core (lib.mjs). Run by web/page_test.go, which sets
// GATEHOUSE, REPO, STATE, ARTIFACTS and CHROMIUM.
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { shots, axe, session, check } from './lib.mjs';

const { GATEHOUSE, REPO, STATE, ARTIFACTS, CHROMIUM } = process.env;
const git = (...args) => execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8' });
const s = session({ gatehouse: GATEHOUSE, repo: REPO, state: STATE, artifacts: ARTIFACTS });
const { step, errors } = s;

const screens = [];
async function screen(page, name) {
  await shots(page, name, ARTIFACTS);
  const found = await axe(page, name);
  screens.push(name);
  step(`screen ${name}: ${found.length} minor accessibility notes`);
}

// answer makes the page's next confirmations answered yes or no (lib.mjs
// accepts every one; the commit's question is also answered no here).
function answering(page) {
  page.answer = true;
  page.removeAllListeners('dialog');
  page.on('dialog', (d) => { page.dialogs.push(d.message()); return page.answer ? d.accept() : d.dismiss(); });
}

// reason is the text written beside the button named name (ui.js
// disable: the button's description), '' when it has none. The button, its
// description and the text are read in one step: a live update that redraws
// the screen between two reads gives the new screen new ids, and the old
// id then named nothing (the run waited 30 s for why-1 and failed).
async function reason(page, name) {
  const r = await page.getByRole('button', { name, exact: true }).evaluate((b) => {
    const id = b.getAttribute('aria-describedby');
    const d = id && document.getElementById(id);
    return { id, disabled: b.disabled, text: d ? d.innerText.trim() : null };
  });
  if (!r.id) return '';
  check(r.disabled, `${name} has a reason beside it but can be used`);
  check(r.text !== null, `${name} is described by ${r.id}, which is not on the page`);
  return r.text;
}

async function openChanges(page) {
  await page.getByRole('button', { name: /^repo\b/ }).click();
  await page.getByRole('heading', { name: /Not staged/ }).waitFor();
  await page.getByRole('button', { name: /^many\/ \(60 new files\)/ }).waitFor();
}

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  answering(page);
  await openChanges(page);

  // Sixty new files are one row, and the commit form is in the first screenful.
  const rows = await page.getByRole('list', { name: 'Changes not staged' }).locator(':scope > li').count();
  check(rows < 10, `the list has ${rows} rows for a handful of changes and sixty new files in one folder`);
  check(await page.getByRole('button', { name: /^many\/new-07\.txt/ }).count() === 0, 'the new files in many/ are listed one by one before the folder is opened');
  const top = await page.getByLabel('Commit message').evaluate((el) => el.getBoundingClientRect().top);
  check(top < 844 - 100, `the commit form starts ${top} px down a 844 px screen`);

  // A secret file keeps its mark at full.
  const envRow = page.getByRole('list', { name: 'Changes not staged' }).getByRole('listitem').filter({ hasText: '.env' });
  await envRow.getByText('Secret').waitFor();

  // No remote: said beside Fetch, Pull and Push, before any tap.
  for (const [name, want] of [['Fetch', 'fetch from'], ['Pull', 'pull from'], ['Push', 'push to']]) {
    const said = await reason(page, name);
    check(said === `no remote to ${want}: add one on the computer with git remote add`, `beside ${name}: ${JSON.stringify(said)}`);
  }
  await screen(page, 'changes-full');
  step('full: one row for many/, the commit form in reach, Secret on .env, no remote said');

  // The folder opens in place, and its sixty files are there.
  await page.getByRole('button', { name: /^many\/ \(60 new files\)/ }).click();
  await page.getByRole('button', { name: /^many\/new-59\.txt/ }).waitFor();
  check(await page.getByRole('list', { name: 'New files in many/' }).getByRole('listitem').count() === 60, 'the opened folder does not list sixty files');
  await screen(page, 'changes-folder');
  await page.getByRole('button', { name: /^many\/ \(60 new files\)/ }).click();
  await page.getByRole('button', { name: /^many\/new-59\.txt/ }).waitFor({ state: 'detached' });
  step('the folder opens and closes');

  // Stage all at full leaves the secret file out and says so.
  await page.getByRole('button', { name: 'Stage all', exact: true }).click();
  await page.locator('.note', { hasText: /^Staged \d+ files\. Left out the secret file \.env/ }).waitFor({ timeout: 30000 });
  let cached = git('diff', '--cached', '--name-only');
  check(cached.includes('many/new-59.txt') && cached.includes('a.txt'), `Stage all did not stage the rest:\n${cached}`);
  check(!cached.split('\n').includes('.env'), 'Stage all staged the secret .env at full');
  check(!page.dialogs.length, `Stage all asked: ${page.dialogs}`);
  await screen(page, 'changes-stage-all');
  step('Stage all left .env out');

  // Staging it on its own row asks first, naming it.
  await envRow.getByRole('button', { name: 'Stage .env', exact: true }).click();
  await page.getByRole('heading', { name: /Not staged \(0\)/ }).waitFor();
  check(page.dialogs.some((d) => d.startsWith('.env is a secret file')), `no question before staging .env: ${page.dialogs}`);
  check(git('diff', '--cached', '--name-only').split('\n').includes('.env'), '.env is not staged after the question was answered yes');
  const stagedEnv = page.getByRole('list', { name: 'Staged changes' }).getByRole('listitem').filter({ hasText: '.env' });
  await stagedEnv.getByText('Secret').waitFor();

  // Committing with it staged asks first; no commits nothing.
  const head = git('rev-parse', 'HEAD').trim();
  page.dialogs.length = 0;
  page.answer = false;
  await page.getByLabel('Commit message').fill('From the phone, with everything');
  await page.getByRole('button', { name: 'Commit', exact: true }).click();
  await page.locator('.note', { hasText: 'Not committed. Unstage .env first' }).waitFor();
  check(page.dialogs.some((d) => d.startsWith('The secret file .env is staged')), `no question before the commit: ${page.dialogs}`);
  check(git('rev-parse', 'HEAD').trim() === head, 'the commit went through after the question was answered no');
  await screen(page, 'changes-commit-secret');
  page.answer = true;

  // Unstaged again, the commit asks nothing and leaves .env out.
  await stagedEnv.getByRole('button', { name: 'Unstage .env', exact: true }).click();
  await page.getByRole('heading', { name: /Not staged \(1\)/ }).waitFor();
  page.dialogs.length = 0;
  await page.getByRole('button', { name: 'Commit', exact: true }).click();
  await page.getByText(/^Committed [0-9a-f]{8}/).waitFor({ timeout: 30000 });
  check(!page.dialogs.length, `the commit without a secret asked: ${page.dialogs}`);
  const files = git('show', '--name-only', '--format=', 'HEAD');
  check(files.includes('many/new-00.txt') && !files.split('\n').includes('.env'), `the commit holds:\n${files}`);
  step('staging .env asked; the commit with it asked, and no committed nothing; without it, committed');

  // Control: .env still marked; what needs full says so beside it.
  for (let i = 0; i < 3; i++) execFileSync('sh', ['-c', `mkdir -p "${REPO}/more" && echo new > "${REPO}/more/f${i}.txt"`]);
  const control = await s.pair(browser, 'control');
  await control.getByRole('button', { name: /^repo\b/ }).click();
  await control.getByRole('button', { name: /^more\/ \(3 new files\)/ }).waitFor();
  await control.getByRole('list', { name: 'Changes not staged' }).getByRole('listitem').filter({ hasText: '.env' }).getByText('Secret').waitFor();
  for (const name of ['Fetch', 'Pull', 'Push']) {
    const said = await reason(control, name);
    check(said.startsWith('needs full access'), `beside ${name} at control: ${JSON.stringify(said)}`);
  }
  check(await reason(control, 'Stage all') === '', 'control may stage, yet Stage all has a reason beside it');
  check(await reason(control, 'Branches') === '', 'control may list branches, yet Branches has a reason beside it');
  await screen(control, 'changes-control');
  step('control: Secret on .env, "needs full access" beside what it may not do');

  // View: staging and discarding need control, said beside them.
  const view = await s.pair(browser, 'view');
  await view.getByRole('button', { name: /^repo\b/ }).click();
  await view.getByRole('button', { name: /^more\/ \(3 new files\)/ }).waitFor();
  for (const name of ['Stage all', 'Discard all']) {
    const said = await reason(view, name);
    check(said.startsWith('needs control access'), `beside ${name} at view: ${JSON.stringify(said)}`);
  }
  check((await reason(view, 'Push')).startsWith('needs full access'), 'beside Push at view');
  await screen(view, 'changes-view');
  step('view: "needs control access" beside Stage all and Discard all');

  // The person gives the view device control on the computer: the open
  // page shows it at its next screen, without a reload.
  const listed = JSON.parse(s.gh('devices', '--json')).lan.filter((d) => d.grant === 'view');
  check(listed.length === 1, `one view device listed: ${JSON.stringify(listed)}`);
  s.gh('devices', 'grant', listed[0].id, 'control');
  await view.getByRole('button', { name: 'Files', exact: true }).click();
  await view.getByRole('button', { name: 'Changes', exact: true }).click();
  await view.waitForFunction(() => [...document.querySelectorAll('button')].some((b) => b.textContent === 'Stage all' && !b.disabled));
  step('view given control on the computer: Stage all enabled at the next screen, no reload');

  check(!errors.length, `the page logged errors: ${errors.join('; ')}`);
  console.log(`ok: ${screens.length} screens photographed and checked: ${screens.join(', ')}`);
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
