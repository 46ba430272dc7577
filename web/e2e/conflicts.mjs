// The conflicts screen in headless Chromium against a real gatehouse serve
// and a repository whose merge git itself stopped on two conflicted files
// (page_test.go's conflictRepo), each result checked with git:
//
//   - the changes screen lists each conflicted file once, to resolve, and
//     says what is in progress ("Merging …: 2 conflicted
//     files") and opens the conflicts screen;
//   - Mark resolved as it is, with git's markers still in f.txt, asks first;
//   - f.txt is resolved region by region (ours for the first, both for the
//     second) and its result is the hand edit of git's conflicted file,
//     side's change between the regions kept; g.txt is resolved with
//     Whole file: theirs and equals git's stage 3, what git checkout --theirs gives;
//   - Commit the merge makes a merge commit and leaves a clean checkout;
//   - a rebase git stopped on a conflict is aborted from the page, after a
//     confirmation naming what it throws away, and the branch is back.
//
// Each state is photographed at 320, 390 and 768 px in light and dark and
// checked with axe-core (lib.mjs). Run by web/page_test.go, which sets
// GATEHOUSE, REPO, STATE, ARTIFACTS and CHROMIUM.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { shots, axe, session, check } from './lib.mjs';

const { GATEHOUSE, REPO, STATE, ARTIFACTS, CHROMIUM } = process.env;
const git = (...args) => execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8' });
const gitMay = (...args) => {
  try {
    return execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return String(e.stdout || '');
  }
};
const file = (name) => readFileSync(join(REPO, name), 'utf8');
const s = session({ gatehouse: GATEHOUSE, repo: REPO, state: STATE, artifacts: ARTIFACTS });
const { step, errors } = s;

const screens = [];
async function screen(page, name) {
  await shots(page, name, ARTIFACTS);
  const found = await axe(page, name);
  screens.push(name);
  step(`screen ${name}: ${found.length} minor accessibility notes`);
}

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  const theirsG = git('show', ':3:g.txt');

  await page.getByRole('button', { name: /^repo\b/ }).click();
  await page.getByText(/^Merging \(Merge branch 'side'\): 2 conflicted files$/).waitFor();
  await screen(page, 'conflicts-banner');
  // Each conflicted file is listed once, to resolve, never to stage or
  // discard.
  const notStaged = page.getByRole('list', { name: 'Changes not staged' });
  for (const name of ['f.txt', 'g.txt']) await notStaged.getByRole('button', { name: `Resolve ${name}` }).waitFor();
  check(await page.getByRole('list', { name: 'Staged changes' }).getByText('f.txt').count() === 0, 'a conflicted file is listed as staged');
  check(await notStaged.getByRole('button', { name: 'Discard f.txt' }).count() === 0, 'a conflicted file offers Discard');
  step('the changes screen lists each conflicted file once, with Resolve');
  await page.getByRole('button', { name: 'Resolve', exact: true }).click();
  await page.getByRole('heading', { name: /^Merging/ }).waitFor();
  await page.getByRole('group', { name: 'Region 2 of 2' }).waitFor();
  await screen(page, 'conflicts-merge');
  step('the banner opens the conflicts screen, with both files and their regions');

  // Mark resolved as it is, with git's markers still in the file, asks
  // first; answered no, nothing changes.
  page.removeAllListeners('dialog');
  page.dialogs = [];
  page.on('dialog', (d) => { page.dialogs.push(d.message()); d.dismiss(); });
  await page.getByRole('button', { name: 'Mark resolved as it is: f.txt' }).click();
  await page.getByText(/^Not marked: f\.txt still has \d+ conflict marker lines\. Choose a side or edit them out first\.$/).waitFor();
  check(page.dialogs.length === 1 && /^f\.txt still has \d+ conflict marker lines/.test(page.dialogs[0]), `marking it asked ${JSON.stringify(page.dialogs)}`);
  check(git('ls-files', '-u', '--', 'f.txt') !== '', 'a declined mark resolved f.txt');
  page.removeAllListeners('dialog');
  page.dialogs = [];
  page.on('dialog', (d) => { page.dialogs.push(d.message()); d.accept(); });
  step('Mark resolved as it is with markers left asks first, and no leaves the conflict');

  // f.txt, region by region.
  await page.getByRole('button', { name: 'Take ours for region 1 of f.txt' }).click();
  await page.getByRole('button', { name: 'Take both for region 2 of f.txt' }).click();
  check(await page.getByRole('button', { name: 'Take both for region 2 of f.txt' }).getAttribute('aria-pressed') === 'true', 'region 2 shows its choice');
  await page.getByRole('button', { name: 'Edit the result: f.txt' }).click();
  await page.getByLabel('The result for f.txt').waitFor();
  await screen(page, 'conflicts-edit');
  await page.getByRole('button', { name: 'Resolve with these choices: f.txt' }).click();
  await page.getByText(/^Resolved f\.txt\. 1 file still in conflict\.$/).waitFor();
  const want = '1\n2o\n3\n4\n5t\n6\n7\n8o\n8t\n9\n';
  check(file('f.txt') === want, `f.txt is ${JSON.stringify(file('f.txt'))}, not the hand edit ${JSON.stringify(want)}`);
  check(git('show', ':0:f.txt') === want, 'f.txt is not staged as resolved');
  step('f.txt resolved by region: the hand edit, side\'s change between the regions kept, staged');

  // g.txt, whole.
  await page.getByRole('button', { name: 'Whole file: theirs, for g.txt' }).click();
  await page.getByText(/^Resolved g\.txt\. No file is in conflict any more\.$/).waitFor();
  check(file('g.txt') === theirsG && git('show', ':0:g.txt') === theirsG, 'g.txt is not what git checkout --theirs gives');
  step('g.txt resolved with Whole file: theirs: git\'s stage 3, byte for byte');

  await page.getByRole('button', { name: 'Commit the merge' }).click();
  await page.getByText(/^Committed the merge: [0-9a-f]{8}\.$/).waitFor();
  check(git('log', '-1', '--format=%P').trim().split(' ').length === 2, 'the conclusion is not a merge commit');
  check(git('status', '--porcelain') === '', `the checkout is not clean: ${git('status', '--porcelain')}`);
  step('Commit the merge: a merge commit, the checkout clean');

  // A rebase git stopped on a conflict, aborted from the page.
  git('checkout', '-q', 'topic');
  const topic = git('rev-parse', 'HEAD');
  gitMay('rebase', 'main');
  check(gitMay('status').includes('rebase in progress'), 'the rebase did not stop');
  await page.getByRole('button', { name: 'Changes', exact: true }).click();
  await page.getByText(/^Rebasing: 1 conflicted file$/).waitFor();
  await page.getByRole('button', { name: 'Resolve', exact: true }).click();
  await page.getByRole('heading', { name: /^Rebasing/ }).waitFor();
  await page.getByRole('group', { name: 'Region 1 of 1' }).waitFor();
  await screen(page, 'conflicts-rebase');
  page.dialogs.length = 0;
  await page.getByRole('button', { name: 'Abort', exact: true }).click();
  await page.getByText(/^Aborted the rebase\.$/).waitFor();
  check(page.dialogs.length === 1 && page.dialogs[0].includes('thrown away'), `the abort asked ${JSON.stringify(page.dialogs)}`);
  check(!gitMay('status').includes('rebase in progress'), 'the rebase is still in progress');
  check(git('rev-parse', 'HEAD') === topic && git('symbolic-ref', '--short', 'HEAD').trim() === 'topic', 'the branch is not back where it was');
  step('the rebase aborted after a confirmation naming what it throws away; topic back where it was');

  check(!errors.length, `the page logged errors: ${errors.join('; ')}`);
  console.log(`ok: ${screens.length} screens photographed and checked: ${screens.join(', ')}`);
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
