// The page's GitHub screens in headless Chromium, through a real
// gatehouse serve whose gh (the real one) talks to a local fake of GitHub:
// pull requests (list, one with its checks and review, its files with the
// secret file left out for a control device, approve, merge after a
// confirmation that names the failing check), issues (one,
// a comment), CI runs (one, its jobs), search, and the clone screen with
// the switch off. Each change is checked in the fake's state through the
// host's own view of it; each screen is photographed and checked with
// axe-core as in run.mjs.
//
// Run by web/page_test.go (TestGitHubPageInChromium), which starts the
// fake, builds gatehouse and the repository, and sets GATEHOUSE, REPO,
// STATE, ARTIFACTS, CHROMIUM and gh's GH_* variables.
import { chromium } from 'playwright-core';
import { shots, axe, session, check } from './lib.mjs';

const { GATEHOUSE, REPO, STATE, ARTIFACTS, CHROMIUM } = process.env;
const s = session({ gatehouse: GATEHOUSE, repo: REPO, state: STATE, artifacts: ARTIFACTS });
const { step, errors } = s;

const screens = [];
async function screen(page, name) {
  await shots(page, name, ARTIFACTS);
  await axe(page, name);
  screens.push(name);
  step(`screen ${name}`);
}

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await page.getByRole('button', { name: /^repo\b/ }).click();
  await page.getByRole('button', { name: 'GitHub', exact: true }).click();

  // Pull requests: the list, one with its checks and review.
  await page.getByRole('button', { name: /#3 Add greeting/ }).waitFor({ timeout: 30000 });
  check((await page.locator('main').innerText()).includes('On GitHub: octo/hello'), 'the list does not name its repository');
  await screen(page, 'gh-pulls');
  await page.getByRole('button', { name: /#3 Add greeting/ }).click();
  await page.getByRole('heading', { name: 'Checks (2)' }).waitFor();
  // Outcomes are words with drawn icons (no emoji or symbol font needed),
  // and the failing check is said beside Merge before any tap.
  await page.locator('.outcome.success', { hasText: 'success' }).locator('svg.icon-check[aria-hidden="true"]').first().waitFor();
  await page.locator('.outcome.failure', { hasText: 'failure' }).locator('svg.icon-cross[aria-hidden="true"]').first().waitFor();
  await page.getByText('A check does not pass: lint (failure).').waitFor();
  await screen(page, 'gh-pull');

  // Its files, one at a time: a tap draws that file's diff as the page
  // draws git's.
  await page.getByRole('button', { name: 'Files changed' }).click();
  await page.getByRole('button', { name: /README\.md/ }).click();
  await page.locator('.diff').waitFor();
  check((await page.locator('main').innerText()).includes('Greetings, user.'), 'the pull request diff lacks its lines');
  await screen(page, 'gh-pull-files');
  await page.goBack();

  // Approve, then merge after the confirmation.
  await page.getByRole('button', { name: 'Approve', exact: true }).click();
  await page.getByText('Approved.').waitFor({ timeout: 30000 });
  await page.getByRole('button', { name: 'Merge', exact: true }).click();
  await page.getByText('Merged #3.').waitFor({ timeout: 30000 });
  check(page.dialogs.some((d) => d === 'Merge #3 into main on GitHub although a check fails: lint (failure)?'),
    `the confirmation before the merge does not name the failing check: ${page.dialogs}`);
  await page.getByText(/^merged/).first().waitFor();
  step('approved and merged');
  await page.goBack();

  // Issues: one, and a comment on it.
  await page.getByRole('button', { name: 'Issues', exact: true }).click();
  await page.getByRole('button', { name: /#1 Crash on start/ }).click();
  await page.getByText('Can you share the log?').waitFor();
  await page.getByLabel('Comment', { exact: true }).fill('Here is the log, from the phone.');
  await page.getByRole('button', { name: 'Comment', exact: true }).click();
  await page.getByText('Commented.').waitFor({ timeout: 30000 });
  await page.getByText('Here is the log, from the phone.').waitFor();
  await screen(page, 'gh-issue');
  await page.goBack();

  // CI runs: one, with its jobs.
  await page.getByRole('button', { name: 'CI runs', exact: true }).click();
  await page.getByRole('button', { name: /^Add greeting/ }).click();
  await page.getByRole('heading', { name: 'Jobs (2)' }).waitFor();
  await screen(page, 'gh-run');
  await page.goBack();

  // Search, pinned to the project's repository.
  await page.getByLabel('Search issues and pull requests').fill('settings');
  await page.getByLabel('Search issues and pull requests').press('Enter');
  await page.getByRole('button', { name: /Issue #2 Document the settings/ }).waitFor({ timeout: 30000 });
  await screen(page, 'gh-search');
  step('issues, runs, search');

  // A control device: the pull request's files leave the secret file out,
  // and what needs full is explained before the tap.
  const page2 = await s.pair(browser, 'control');
  await page2.getByRole('button', { name: /^repo\b/ }).click();
  await page2.getByRole('button', { name: 'GitHub', exact: true }).click();
  await page2.getByLabel('Show').selectOption('all');
  await page2.getByRole('button', { name: /#3 Add greeting/ }).click();
  await page2.getByRole('button', { name: 'Files changed' }).click();
  await page2.getByText('1 file(s) left out: secret files are not shown to this device.').waitFor();
  check(!(await page2.locator('main').innerText()).includes('API_KEY'), 'the secret file reached a control device');
  step('secret left out for control');

  // The clone screen: the account's repositories; with the switch off, a
  // clone is explained, not attempted.
  await page.goto(new URL(page.url()).origin + '/');
  await page.getByRole('button', { name: 'Clone a repository' }).click();
  await page.getByText('octo/hello').first().waitFor({ timeout: 30000 });
  await page.getByText('Turn on Full access for remote devices on the computer to use this.').first().waitFor();
  await screen(page, 'gh-clone');
  check(!errors.length, `the page logged errors: ${errors.join('; ')}`);
  console.log(`ok: ${screens.length} GitHub screens photographed and checked: ${screens.join(', ')}`);
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
