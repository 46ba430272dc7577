// Everyday changes besides a commit, in headless Chromium against a real
// gatehouse serve and repository (page_test.go's everydayRepo: a.txt
// changed, new.txt new, the last commit "Add b" not pushed, origin/main one
// commit behind), each result checked with git:
//
//   - stash with a message and the new files, the Stashes list, a stash's
//     diff, pop: the work tree comes back and the stash is gone;
//   - amend the unpushed last commit with a new message and what is
//     staged; once origin/main holds it, Amend is disabled with the
//     computer's sentence beside it;
//   - revert a commit from its screen, after a confirmation.
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
const s = session({ gatehouse: GATEHOUSE, repo: REPO, state: STATE, artifacts: ARTIFACTS });
const { step, errors } = s;

const screens = [];
async function screen(page, name) {
  await shots(page, name, ARTIFACTS);
  const found = await axe(page, name);
  screens.push(name);
  step(`screen ${name}: ${found.length} minor accessibility notes`);
}

// described is the text beside the button named name (ui.js disable), read
// in one step with the button, or null while it has none.
async function described(page, name) {
  return page.getByRole('button', { name, exact: true }).evaluate(readDescribed);
}

function readDescribed(b) {
  const id = b.getAttribute('aria-describedby');
  const d = id && document.getElementById(id);
  return d ? { disabled: b.disabled, text: d.innerText.trim() } : null;
}

// describedAs waits until the button named name is disabled with a text
// beside it starting with prefix: a live update may draw the screen again
// between two reads, and the new button has its reason only once the
// computer has answered. A timeout prints the last state seen.
async function describedAs(page, name, prefix) {
  let last = null;
  for (let i = 0; i < 300; i++) {
    last = await page.getByRole('button', { name, exact: true }).evaluate(readDescribed).catch((e) => `unreadable: ${e.message.split('\n')[0]}`);
    if (last && last.disabled && last.text && last.text.startsWith(prefix)) return last;
    await page.waitForTimeout(100);
  }
  check(false, `beside ${name}: ${JSON.stringify(last)}`);
}

async function openChanges(page) {
  await page.getByRole('button', { name: 'Changes', exact: true }).click();
  await page.getByRole('heading', { name: /Not staged/ }).waitFor();
}

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  await page.getByRole('button', { name: /^repo\b/ }).click();
  await page.getByRole('heading', { name: /Not staged \(2\)/ }).waitFor();

  // Stash with a message and the new file.
  await page.getByText('Stash', { exact: true }).click();
  await page.getByLabel('Stash message').fill('half done');
  await page.getByLabel('with new files').check();
  await screen(page, 'stash-form');
  await page.getByRole('button', { name: 'Stash changes', exact: true }).click();
  await page.getByText('Stashed 2 files.').waitFor({ timeout: 30000 });
  const listed = git('stash', 'list', '--format=%gs').trim();
  check(/^On main: half done$/.test(listed), `git stash list: ${JSON.stringify(listed)}`);
  check(git('status', '--porcelain').trim() === '', `the work tree is not clean after the stash:\n${git('status', '--porcelain')}`);
  step('stashed with a message and the new file; git agrees');

  // The list, and the stash's diff.
  await page.getByRole('button', { name: 'Stashes', exact: true }).click();
  const row = page.getByRole('list', { name: 'Stashes' }).getByRole('listitem').filter({ hasText: 'half done' });
  await row.waitFor();
  await row.getByText('on main').waitFor();
  await screen(page, 'stash-list');
  await row.getByRole('button', { name: /^half done/ }).click();
  await page.getByRole('heading', { name: '2 files changed' }).waitFor();
  await page.getByText('changed on the phone').first().waitFor();
  await page.getByText('It holds new files too').waitFor();
  await screen(page, 'stash-show');
  await page.goBack();
  await row.waitFor();

  // Pop: the changes come back and the stash is gone.
  await row.getByRole('button', { name: 'Pop half done', exact: true }).click();
  await page.getByText(/^Popped "half done"/).waitFor({ timeout: 30000 });
  check(git('stash', 'list').trim() === '', `a stash is left after the pop:\n${git('stash', 'list')}`);
  check(readFileSync(join(REPO, 'a.txt'), 'utf8').includes('changed on the phone'), 'a.txt did not come back');
  check(readFileSync(join(REPO, 'new.txt'), 'utf8') === 'new\n', 'new.txt did not come back');
  await page.getByText('No stashes.').waitFor();
  await screen(page, 'stash-popped');
  step('the list, the diff and the pop; git agrees');

  // Amend the unpushed last commit: a new message and a.txt staged.
  git('add', 'a.txt');
  const before = git('rev-parse', 'HEAD').trim();
  await openChanges(page);
  await page.waitForFunction(() => [...document.querySelectorAll('button')].some((b) => b.textContent === 'Amend last commit' && !b.disabled));
  await page.getByLabel('Commit message').fill('Add b, and a.txt');
  await screen(page, 'amend-form');
  page.dialogs.length = 0;
  await page.getByRole('button', { name: 'Amend last commit', exact: true }).click();
  await page.getByText(/^Amended: the last commit is now [0-9a-f]{8}/).waitFor({ timeout: 30000 });
  check(page.dialogs.some((d) => d.startsWith('Replace the last commit "Add b"')), `no question before the amend: ${page.dialogs}`);
  const after = git('rev-parse', 'HEAD').trim();
  check(after !== before && git('rev-parse', 'HEAD~1').trim() === git('rev-parse', 'origin/main').trim(), 'the amend did not replace the last commit');
  check(git('log', '-1', '--format=%s').trim() === 'Add b, and a.txt', `message: ${git('log', '-1', '--format=%s')}`);
  const files = git('show', '--name-only', '--format=', 'HEAD');
  check(files.includes('a.txt') && files.includes('b.txt'), `the amended commit holds:\n${files}`);
  await screen(page, 'amend-done');
  step('amended the unpushed commit; git agrees');

  // Pushed: origin/main now holds HEAD, and Amend says so beside it.
  git('update-ref', 'refs/remotes/origin/main', 'HEAD');
  await page.getByRole('button', { name: 'Files', exact: true }).click();
  await openChanges(page);
  await describedAs(page, 'Amend last commit', 'The last commit is already pushed; amending it would rewrite history others have');
  await screen(page, 'amend-pushed');
  step('a pushed commit: Amend disabled with the computer\'s sentence');

  // Revert a commit from its screen.
  await page.getByRole('button', { name: 'History', exact: true }).click();
  await page.getByRole('button', { name: /^Add b, and a\.txt/ }).click();
  await page.getByRole('button', { name: 'Revert this commit', exact: true }).waitFor();
  await screen(page, 'revert-commit');
  page.dialogs.length = 0;
  await page.getByRole('button', { name: 'Revert this commit', exact: true }).click();
  await page.getByText(/^Reverted: new commit [0-9a-f]{8}/).waitFor({ timeout: 30000 });
  check(page.dialogs.some((d) => d.startsWith('Make a new commit that undoes "Add b, and a.txt"')), `no question before the revert: ${page.dialogs}`);
  check(git('log', '-1', '--format=%s').trim() === 'Revert "Add b, and a.txt"', `HEAD: ${git('log', '-1', '--format=%s')}`);
  check(!git('ls-files').split('\n').includes('b.txt'), 'b.txt is still tracked after the revert');
  check(git('show', 'HEAD:a.txt') === 'a\nsecond\n', `a.txt after the revert: ${JSON.stringify(git('show', 'HEAD:a.txt'))}`);
  await screen(page, 'revert-done');
  step('reverted; git agrees');

  // Control: may stash and apply, not drop or amend; said beside them.
  execFileSync('sh', ['-c', `echo "conflicting" > "${REPO}/b2.txt"`]);
  git('stash', 'push', '-q', '-u', '-m', 'for control');
  const control = await s.pair(browser, 'control');
  await control.getByRole('button', { name: /^repo\b/ }).click();
  await control.getByRole('heading', { name: /Not staged/ }).waitFor();
  check(await control.getByRole('button', { name: 'Amend last commit', exact: true }).count() === 0, 'control sees the commit form\'s Amend');
  await control.getByText('Stash', { exact: true }).click();
  await control.getByRole('button', { name: 'Stashes', exact: true }).click();
  const crow = control.getByRole('list', { name: 'Stashes' }).getByRole('listitem').filter({ hasText: 'for control' });
  await crow.waitFor();
  await describedAs(control, 'Drop for control', 'needs full access');
  check(await described(control, 'Apply for control') === null, 'Apply has a reason beside it at control');
  await screen(control, 'stash-control');
  step('control: Drop needs full access, said beside it');

  // An apply with its new file in the way is refused beside the button,
  // and the stash is kept.
  execFileSync('sh', ['-c', `echo "in the way" > "${REPO}/b2.txt"`]);
  await crow.getByRole('button', { name: 'Apply for control', exact: true }).click();
  await crow.getByText(/^A new file this stash holds is in the work tree again/).waitFor({ timeout: 30000 });
  check(git('stash', 'list', '--format=%gs').includes('for control'), 'the stash is gone after a refused apply');
  await screen(control, 'stash-refused');
  step('an apply in the way of a new file is refused beside its button; the stash is kept');

  // A pop that stops on a conflict: resolved from the conflicts screen, the
  // stash is still listed, and the page says so.
  execFileSync('sh', ['-c', `cd "${REPO}" && rm -f b2.txt && git stash drop -q && git reset -q --hard && echo "the stash's side" > a.txt && git stash push -q -m clashing -- a.txt && echo "the commit's side" > a.txt && git commit -qam "the commit's side"`]);
  await page.evaluate(() => { location.hash = location.hash.replace(/^(#\/(?:c\/[0-9]+\/)?p\/[^/]+)\/.*$/, '$1/stashes'); });
  const clash = page.getByRole('list', { name: 'Stashes' }).getByRole('listitem').filter({ hasText: 'clashing' });
  await clash.getByRole('button', { name: 'Pop clashing', exact: true }).click();
  await page.getByText(/^Stopped on a conflict: .*The stash is kept \(a pop drops it only once it applies cleanly\)/).waitFor({ timeout: 30000 });
  await page.evaluate(() => { location.hash = location.hash.replace(/^(#\/(?:c\/[0-9]+\/)?p\/[^/]+)\/.*$/, '$1/conflicts'); });
  await page.getByRole('button', { name: 'Whole file: ours, for a.txt' }).click();
  await page.getByText(/^Resolved a\.txt\. No file is in conflict any more\. The stash you applied is still in the Stashes list/).waitFor({ timeout: 30000 });
  check(git('stash', 'list', '--format=%gs').includes('clashing'), 'the stash a conflicted pop applied is gone');
  check(git('ls-files', '-u') === '', `files are still in conflict:\n${git('ls-files', '-u')}`);
  await screen(page, 'stash-pop-resolved');
  step('a pop that stopped on a conflict: resolved, and the page says the stash is kept; git agrees');

  check(!errors.length, `the page logged errors: ${errors.join('; ')}`);
  console.log(`ok: ${screens.length} screens photographed and checked: ${screens.join(', ')}`);
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
