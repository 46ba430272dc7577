// Pull requests end to end in headless Chromium, through a real gatehouse
// serve whose gh (the real one) talks to a local fake of GitHub: open a
// pull request from the page (the branch pushed first, the base chosen
// from the repository's branches), approve it, squash-merge it with the
// method chosen from those the repository allows, read a 400-file pull
// request's files a page at a time and one file's diff on a tap, read why
// a CI run failed (its failed step's log, colours gone, the token masked),
// and a search naming another repository refused with its sentence. Each
// screen is photographed at 320/390/768 in light and dark and checked with
// axe-core; web/page_test.go (TestPullsPageInChromium) checks the fake's
// state and the pushed branch with git afterwards.
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
  // The branch is pushed to a local folder (url.pushInsteadOf), which the
  // closed gate's transports refuse: the person turned the switch on.
  s.gh('access', 'on');
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await page.getByRole('button', { name: /^repo\b/ }).click();
  await page.getByRole('button', { name: 'GitHub', exact: true }).click();
  await page.getByRole('button', { name: /#3 Add greeting/ }).waitFor({ timeout: 30000 });

  // Open a pull request: the form, its base the default branch first.
  await page.getByRole('button', { name: 'Open a pull request' }).click();
  await page.getByLabel('Title').waitFor({ timeout: 30000 });
  const bases = await page.locator('#pr-base option').allInnerTexts();
  check(bases[0] === 'main (default)' && bases.includes('greeting'), `the bases offered: ${bases}`);
  await page.getByLabel('Title').fill('Add the feature from the phone');
  await page.getByLabel('Description').fill('Opened on the phone.\n\nIt adds feature.txt.');
  await screen(page, 'gh-pull-new-form');
  await page.getByRole('button', { name: 'Open pull request' }).click();
  await page.getByText('Opened #6.').waitFor({ timeout: 60000 });
  await page.getByRole('heading', { name: 'Add the feature from the phone' }).waitFor();
  await page.getByText('feature → main').waitFor();
  await screen(page, 'gh-pull-new-opened');
  step('opened #6');

  // Review it, then squash-merge it with the method chosen.
  await page.getByRole('button', { name: 'Approve', exact: true }).click();
  await page.getByText('Approved.').waitFor({ timeout: 30000 });
  await page.locator('#pr-method').waitFor({ timeout: 30000 });
  const methods = await page.locator('#pr-method option').allInnerTexts();
  check(methods.join(',') === 'Merge commit,Squash', `the merge methods offered: ${methods}`);
  await page.getByLabel('Merge method').selectOption('squash');
  await page.getByRole('button', { name: 'Squash and merge' }).waitFor();
  await page.locator('.merge-message summary').click();
  await screen(page, 'gh-pull-merge-squash');
  await page.getByRole('button', { name: 'Squash and merge' }).click();
  await page.getByText('Merged #6.').waitFor({ timeout: 60000 });
  check(page.dialogs.includes('Squash and merge #6 into main on GitHub?'), `the confirmation: ${page.dialogs}`);
  await page.getByText(/^merged/).first().waitFor();
  await screen(page, 'gh-pull-merge-done');
  step('approved and squash-merged #6');
  await page.goBack();

  // A 400-file pull request, its files a page at a time.
  await page.getByRole('button', { name: /#4 WIP: refactor/ }).click();
  await page.getByRole('button', { name: 'Files changed' }).click();
  await page.getByRole('heading', { name: '401 files changed' }).waitFor({ timeout: 30000 });
  const first = await page.locator('.pr-files > li').count();
  check(first >= 50 && first < 401, `the first page held ${first} files`);
  await screen(page, 'gh-pull-files-list');
  for (let i = 0; i < 20 && (await page.locator('.pr-files > li').count()) < 401; i++) {
    const before = await page.locator('.pr-files > li').count();
    await page.locator('button.more').scrollIntoViewIfNeeded().catch(() => {});
    await page.waitForFunction((n) => document.querySelectorAll('.pr-files > li').length > n || !document.querySelector('button.more'), before, { timeout: 30000 });
  }
  check((await page.locator('.pr-files > li').count()) === 401, 'scrolling did not load every file');
  await page.getByRole('button', { name: /src\/f399\.go/ }).click();
  await page.locator('.pr-file-diff .diff').first().waitFor({ timeout: 30000 });
  check((await page.locator('.pr-file-diff:has(.diff)').innerText()).includes('new 399'), 'the file\'s diff lacks its line');
  await page.getByRole('button', { name: /src\/f000\.go/ }).click();
  await page.locator('.pr-file-diff .diff').nth(1).waitFor({ timeout: 30000 });
  check(await page.getByRole('button', { name: /src\/f000\.go/ }).getAttribute('aria-expanded') === 'true', 'the first file did not open');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screen(page, 'gh-pull-files-open');
  step('401 files read a page at a time');
  await page.goBack();
  await page.goBack();

  // Why a CI run failed.
  await page.getByRole('button', { name: 'CI runs', exact: true }).click();
  await page.getByRole('button', { name: /^Add greeting/ }).click();
  await page.getByRole('heading', { name: 'lint: Run make lint' }).waitFor({ timeout: 30000 });
  const log = await page.locator('pre.log').innerText();
  check(log.includes('exported func Hello has no comment') && log.includes('GITHUB_TOKEN=***') && !log.includes('ghs_') && !log.includes('\u001b'), `the log: ${log}`);
  await screen(page, 'gh-run-log');
  step('the failed step\'s log');
  await page.goBack();

  // The same log a tap away from the pull request's failed check.
  await page.getByRole('button', { name: 'Pull requests', exact: true }).click();
  await page.getByRole('button', { name: /#3 Add greeting/ }).click();
  await page.getByRole('button', { name: 'Why lint failed' }).click();
  await page.getByRole('heading', { name: 'lint: Run make lint' }).waitFor({ timeout: 30000 });
  step('from the failed check to its log');
  await page.goBack();
  await page.goBack();

  // A search naming another repository: refused with its sentence.
  await page.getByLabel('Search issues and pull requests').fill('repo:victim/private plan');
  await page.getByLabel('Search issues and pull requests').press('Enter');
  await page.getByText('Search this project only: leave out repo:, org:, user: and owner: filters.').waitFor({ timeout: 30000 });
  step('search refused');

  // A view device: Open a pull request and Merge are disabled with their
  // reason, and the secret file is left out of the files.
  const viewer = await s.pair(browser, 'view');
  await viewer.getByRole('button', { name: /^repo\b/ }).click();
  await viewer.getByRole('button', { name: 'GitHub', exact: true }).click();
  await viewer.getByRole('button', { name: 'Open a pull request' }).waitFor({ timeout: 30000 });
  check(await viewer.getByRole('button', { name: 'Open a pull request' }).isDisabled(), 'a view device may tap Open a pull request');
  await viewer.getByRole('button', { name: /#4 WIP: refactor/ }).click();
  await viewer.locator('#pr-merge').waitFor({ timeout: 30000 });
  check(await viewer.locator('#pr-merge').isDisabled(), 'a view device may tap Merge');
  await viewer.getByRole('button', { name: 'Files changed' }).click();
  await viewer.getByRole('heading', { name: '400 files changed' }).waitFor({ timeout: 30000 });
  await viewer.getByText('1 file(s) left out: secret files are not shown to this device.').waitFor();
  step('view device');

  check(!errors.length, `the page logged errors: ${errors.join('; ')}`);
  console.log(`ok: ${screens.length} pull request screens photographed and checked: ${screens.join(', ')}`);
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
