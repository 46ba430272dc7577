// The branches and tags screens in headless Chromium against a real
// gatehouse serve, real git and a bare remote served over git:// on
// loopback (page_test.go's TestBranchesPageInChromium builds them: main
// pushed with its upstream, feature two commits ahead of main, a branch
// remote-only that exists only as origin/remote-only, a tag v0.1), each
// result checked with git in the checkout or the remote:
//
//   - the changes screen's Branches opens the Branches screen, with
//     local and remote branches;
//   - a branch made from feature and switched to, then renamed (the
//     current one: HEAD follows);
//   - the current branch's Delete is disabled with its reason; deleting
//     feature, which has commits merged nowhere, says how many beside the
//     button and asks again; no keeps it, yes deletes it and says its tip;
//   - tapping origin/remote-only makes remote-only tracking it;
//   - tags: an annotated and a lightweight one made, one pushed (the
//     remote gets that tag and no other), an existing name refused;
//   - a view device sees the screens with every change disabled and why.
//
// Each state is photographed (branches-*, tags-*) at 320, 390 and 768 px
// in light and dark and checked with axe-core (lib.mjs).
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { shots, axe, session, check } from './lib.mjs';

const { GATEHOUSE, REPO, STATE, ARTIFACTS, CHROMIUM, BARE } = process.env;
const git = (...args) => execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8' }).trim();
const bare = (...args) => execFileSync('git', ['-C', BARE, ...args], { encoding: 'utf8' }).trim();
const s = session({ gatehouse: GATEHOUSE, repo: REPO, state: STATE, artifacts: ARTIFACTS });
const { step } = s;

async function screen(page, name) {
  await shots(page, name, ARTIFACTS);
  const found = await axe(page, name);
  step(`screen ${name}: ${found.length} minor accessibility notes`);
}

// answers makes the page's next dialogs answered in turn: true accepts,
// false dismisses, a string is typed into a prompt; once they run out,
// every dialog is accepted.
function answers(page, ...list) {
  page.removeAllListeners('dialog');
  page.on('dialog', (d) => {
    page.dialogs.push(d.message());
    const a = list.length ? list.shift() : true;
    if (a === false) return d.dismiss();
    return typeof a === 'string' ? d.accept(a) : d.accept();
  });
}

// until polls git until what it reads is want: the page's answer comes
// before git's state is read, and a fixed sleep is no proof.
async function until(what, read, want) {
  for (let i = 0; i < 100; i++) {
    if (read() === want) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  check(false, `${what}: git says ${JSON.stringify(read())}, want ${JSON.stringify(want)}`);
}

const noted = (page, text) => page.locator('.note').filter({ hasText: text }).first().waitFor();

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  await page.getByRole('button', { name: /^repo\b/ }).click();
  await page.getByRole('button', { name: 'Branches', exact: true }).click();
  await page.getByRole('heading', { name: 'Local branches' }).waitFor();
  await page.getByRole('button', { name: 'Switch to the remote branch origin/remote-only' }).waitFor();
  check(page.url().endsWith('/branches'), `the Branches screen's address is ${page.url()}`);
  await screen(page, 'branches-list');

  // The current branch cannot be deleted: its Delete says why.
  const del = page.getByRole('button', { name: 'Delete the branch main' });
  check(await del.isDisabled(), 'the current branch\'s Delete can be used');
  const why = await del.evaluate((b) => document.getElementById(b.getAttribute('aria-describedby')).innerText);
  check(/checked out here/.test(why), `the current branch's Delete says ${JSON.stringify(why)}`);

  // Create from feature and switch to it.
  await page.getByLabel('Name of the new branch').fill('fix/typo');
  await page.getByLabel('Start from').selectOption('feature');
  await page.getByRole('button', { name: 'Create branch' }).click();
  await noted(page, 'Made fix/typo');
  await until('the new branch is checked out', () => git('branch', '--show-current'), 'fix/typo');
  check(git('rev-parse', 'fix/typo') === git('rev-parse', 'feature'), 'fix/typo is not at feature');
  await screen(page, 'branches-created');

  // Rename the current branch: HEAD follows.
  answers(page, 'fix/spelling');
  await page.getByRole('button', { name: 'Rename the branch fix/typo' }).click();
  await noted(page, 'Renamed fix/typo to fix/spelling');
  await until('the renamed branch is checked out', () => git('branch', '--show-current'), 'fix/spelling');

  // Back to main, then delete feature: refused with the count, kept on no.
  await page.getByRole('button', { name: 'Switch to main' }).click();
  await until('main is checked out', () => git('branch', '--show-current'), 'main');
  await page.getByRole('button', { name: 'Delete the branch feature' }).waitFor();
  const tip = git('rev-parse', 'feature');
  answers(page, true, false);
  await page.getByRole('button', { name: 'Delete the branch feature' }).click();
  const said = page.locator('.note.said');
  await said.waitFor();
  const sentence = await said.innerText();
  check(/has 2 commits not merged into main/.test(sentence), `the refusal says ${JSON.stringify(sentence)}`);
  await until('the refused branch is kept', () => git('rev-parse', 'feature'), tip);
  check(page.dialogs.some((d) => /has 2 commits not merged/.test(d) && /anyway/.test(d)), `the confirmation does not name the commits: ${page.dialogs.join(' | ')}`);
  await screen(page, 'branches-unmerged');
  answers(page, true, true);
  await page.getByRole('button', { name: 'Delete the branch feature' }).click();
  await noted(page, 'Deleted feature');
  await until('feature is deleted', () => git('for-each-ref', 'refs/heads/feature'), '');
  check(await page.locator('.note').filter({ hasText: tip }).count() === 1, 'the deletion does not say the tip it had');
  await screen(page, 'branches-deleted');

  // A remote branch tapped: the local branch tracks it.
  await page.getByRole('button', { name: 'Switch to the remote branch origin/remote-only' }).click();
  await noted(page, 'Switched to remote-only');
  await until('remote-only is checked out', () => git('branch', '--show-current'), 'remote-only');
  check(git('rev-parse', '--abbrev-ref', 'remote-only@{upstream}') === 'origin/remote-only', 'remote-only does not track origin/remote-only');

  // Tags.
  await page.getByRole('button', { name: 'Tags', exact: true }).click();
  await page.getByRole('heading', { name: 'Tags', exact: true }).waitFor();
  await page.getByText('v0.1', { exact: true }).waitFor();
  check(page.url().endsWith('/tags'), `the Tags screen's address is ${page.url()}`);
  await screen(page, 'tags-list');
  await page.getByLabel('Name of the new tag').fill('v1.0');
  await page.getByLabel(/^Message/).fill('First release\n\nFrom the phone.');
  await page.getByRole('button', { name: 'Create tag' }).click();
  await noted(page, 'Made the annotated tag v1.0');
  check(git('cat-file', '-t', 'v1.0') === 'tag', 'v1.0 is not an annotated tag');
  check(git('tag', '-l', '--format=%(contents:subject)', 'v1.0') === 'First release', 'v1.0 has another message');
  await page.getByLabel('Name of the new tag').fill('v1.1');
  await page.getByRole('button', { name: 'Create tag' }).click();
  await noted(page, 'Made the lightweight tag v1.1');
  check(git('cat-file', '-t', 'v1.1') === 'commit', 'v1.1 is not a lightweight tag');
  await screen(page, 'tags-created');
  await page.getByRole('button', { name: 'Push the tag v1.0' }).click();
  await noted(page, 'Pushed the tag v1.0');
  check(bare('for-each-ref', '--format=%(refname)', 'refs/tags') === 'refs/tags/v1.0', `the remote's tags: ${bare('for-each-ref', 'refs/tags')}`);
  check(bare('rev-parse', 'v1.0') === git('rev-parse', 'v1.0'), 'the remote\'s v1.0 is not the tag made');
  await page.getByLabel('Name of the new tag').fill('v1.0');
  await page.getByRole('button', { name: 'Create tag' }).click();
  await page.locator('.note.said').filter({ hasText: 'already exists' }).waitFor();
  await screen(page, 'tags-refused');

  // A view device: the lists, every change disabled with its reason.
  const viewer = await s.pair(browser, 'view');
  await viewer.getByRole('button', { name: /^repo\b/ }).click();
  await viewer.waitForURL(/\/changes$/);
  await viewer.getByRole('button', { name: 'Branches', exact: true }).click();
  await viewer.getByRole('heading', { name: 'Local branches' }).waitFor();
  const create = viewer.getByRole('button', { name: 'Create branch' });
  check(await create.isDisabled(), 'a view device can create a branch');
  const viewWhy = await create.evaluate((b) => document.getElementById(b.getAttribute('aria-describedby')).innerText);
  check(/needs full access/.test(viewWhy), `Create branch says ${JSON.stringify(viewWhy)} to a view device`);
  check(await viewer.getByText('Switching, renaming and deleting branches needs full access').count() === 1, 'the view device is not told once why it may not change branches');
  check(await viewer.getByRole('button', { name: /^Delete the branch/ }).count() === 0, 'a view device gets Delete buttons');
  await screen(viewer, 'branches-view');
  check(s.errors.length === 0, `the page logged errors: ${s.errors.join('\n')}`);
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
