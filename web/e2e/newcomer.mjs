// The page explains itself to a newcomer (CHANGELOG.md), in headless Chromium against a real
// gatehouse serve and repository (page_test.go's pageRepo, which has no
// GitHub remote):
//   - the screen is in the address: a reload opens the same file (a name
//     with a space and a # in it, encoded), back and forward walk the
//     screens before and after the reload, and the address never holds the
//     pairing's key;
//   - icons are drawn (SVG), not emoji that a device without an emoji font
//     shows as boxes;
//   - a refusal is said beside the button that was tapped (role=alert),
//     not at the top;
//   - a control this device may not use is disabled with its reason beside
//     it, in words;
//   - the GitHub tab of a project without a GitHub remote says what to do
//     and shows nothing that cannot work;
//   - search has a mode control with a visible pressed state, and a hit is
//     path:line on one line with the match marked, the line's text drawn
//     as text (markup in a file stays text).
// Each screen is photographed (lib.mjs shots) and checked with axe-core.
//
// Run by web/page_test.go (TestNewcomerPageInChromium).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

const hash = (page) => new URL(page.url()).hash;

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const odd = 'odd name #1.txt';
  writeFileSync(join(REPO, 'src', odd), 'a file whose name needs encoding\n');
  writeFileSync(join(REPO, 'src', 'markup.txt'), 'needle <b>bold</b> <img src=x onerror="window.pwned=1"> &amp;\n');

  const page = await s.pair(browser, 'full');
  await page.getByRole('heading', { name: 'Projects' }).waitFor();

  // 1. The screen is in the address.
  await page.getByRole('button', { name: /^repo\b/ }).click();
  await page.getByRole('heading', { name: /Not staged/ }).waitFor();
  check(/^#\/p\/[^/]+\/changes$/.test(hash(page)), `the changes screen's address: ${hash(page)}`);
  await page.getByRole('button', { name: 'Files', exact: true }).click();
  await page.getByRole('button', { name: 'src/', exact: true }).click();
  await page.getByRole('button', { name: odd }).click();
  await page.getByText('a file whose name needs encoding').waitFor();
  const fileHash = hash(page);
  check(fileHash.endsWith('/file/src/odd%20name%20%231.txt'), `the file's address is not encoded: ${fileHash}`);
  check(!/[A-Za-z0-9_-]{43}/.test(page.url()), `the address holds a key: ${page.url()}`);
  await page.reload();
  await page.getByText('a file whose name needs encoding').waitFor();
  check(hash(page) === fileHash, `a reload moved the address: ${hash(page)}`);
  check((await page.locator('#title').innerText()) === `src/${odd}`, 'a reload did not open the file again');
  await screen(page, 'route-reloaded');
  await page.goBack();
  await page.getByRole('button', { name: odd }).waitFor();
  check((await page.locator('#title').innerText()).endsWith('/src'), 'back after a reload did not open the folder');
  await page.goForward();
  await page.getByText('a file whose name needs encoding').waitFor();
  await page.goBack();
  await page.getByRole('button', { name: odd }).waitFor();
  await page.goBack();
  await page.getByRole('button', { name: 'src/', exact: true }).waitFor();
  check(/\/files$/.test(hash(page)), `back to the files tab: ${hash(page)}`);
  // An address edited by hand that names no screen shows the projects and
  // says why, instead of leaving the last screen under the new address.
  await page.evaluate(() => { location.hash = location.hash.replace(/\/files$/, '/file/src/x.txt?line=abc'); });
  await page.getByText('This address does not name a screen of this page').waitFor();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  check(hash(page) === '', `the address after one that names no screen: ${hash(page)}`);
  await page.goBack();
  step('reload, back and forward keep the screen; a bad address shows the projects');

  // 2. Icons are drawn: no emoji in the folder list, an SVG per row.
  await page.getByRole('button', { name: 'src/', exact: true }).click();
  await page.getByRole('button', { name: /lib\// }).waitFor();
  const text = await page.locator('main').innerText();
  check(!/\p{Extended_Pictographic}/u.test(text), `the folder list still has emoji: ${text}`);
  check(await page.locator('main li svg.icon-folder[aria-hidden="true"]').count() >= 1, 'no drawn folder icon');
  check(await page.locator('#back svg.icon-back').count() === 1, 'the back button has no drawn icon');
  await screen(page, 'icons');
  step('icons drawn');

  // 7. Search: the mode is a pressed button; a hit is path:line on one line
  // with the match marked, and markup in the file stays text.
  await page.goBack();
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByRole('button', { name: 'Contents' }).click();
  check(await page.getByRole('button', { name: 'Contents' }).getAttribute('aria-pressed') === 'true', 'Contents is not shown pressed');
  check(await page.getByRole('button', { name: 'File names' }).getAttribute('aria-pressed') === 'false', 'File names is still shown pressed');
  await page.getByLabel('Search', { exact: true }).fill('NEEDLE');
  await page.getByRole('button', { name: 'Find', exact: true }).click();
  const hit = page.getByRole('button', { name: /src\/lib\/util\.js:90/ });
  await hit.waitFor();
  check(await hit.locator('mark').innerText() === 'needle', `the match is not marked: ${await hit.innerHTML()}`);
  const where = await hit.locator('.where').boundingBox();
  const code = await hit.locator('code').boundingBox();
  check(Math.abs(where.y - code.y) < where.height, `path:line and the line are not on one line: ${JSON.stringify([where, code])}`);
  const markup = page.getByRole('button', { name: /src\/markup\.txt:1/ });
  await markup.waitFor();
  check((await markup.innerText()).includes('<b>bold</b> <img src=x'), 'markup in a found line was not drawn as text');
  check(await markup.locator('b, img').count() === 0, 'markup in a found line became elements');
  check(!(await page.evaluate(() => window.pwned)), 'a found line ran script');
  await screen(page, 'search-modes');
  step('search modes and marked hits');

  // 3. A refusal is said beside the button tapped, not at the top.
  await page.getByRole('button', { name: 'Worktrees', exact: true }).click();
  await page.getByLabel(/Branch name/).fill('bad..name');
  const create = page.getByRole('button', { name: 'Create worktree' });
  await create.click();
  const said = page.locator('.note.said[role="alert"]');
  await said.waitFor({ timeout: 30000 });
  check(await said.evaluate((el) => el.previousElementSibling && el.previousElementSibling.textContent === 'Create worktree'), 'the refusal is not beside Create worktree');
  check((await page.locator('#notes').innerText()).trim() === '', `the refusal is also at the top: ${await page.locator('#notes').innerText()}`);
  await screen(page, 'error-by-button');
  step(`a refusal beside its button: ${await said.innerText()}`);

  // 5. The GitHub tab of a project with no GitHub remote says what to do.
  await page.getByRole('button', { name: 'GitHub', exact: true }).click();
  await page.getByRole('heading', { name: 'This project has no GitHub remote' }).waitFor({ timeout: 30000 });
  await page.getByText('git remote add origin https://github.com/OWNER/REPO').waitFor();
  await page.getByText('gh auth login').waitFor();
  check(await page.getByRole('button', { name: 'Pull requests' }).count() === 0, 'the GitHub lists are shown without a remote');
  check(await page.getByLabel('Search issues and pull requests').count() === 0, 'the GitHub search is shown without a remote');
  check(/\/github$/.test(hash(page)), `the GitHub tab's address: ${hash(page)}`);
  await screen(page, 'gh-no-remote');
  step('GitHub tab without a remote');

  // 4. A view device: what it may not do is disabled, with its reason
  // beside it, in words.
  const viewer = await s.pair(browser, 'view');
  await viewer.getByRole('button', { name: /^repo\b/ }).click();
  await viewer.getByRole('button', { name: 'Worktrees', exact: true }).click();
  const made = viewer.getByRole('button', { name: 'Create worktree' });
  await made.waitFor();
  check(await made.isDisabled(), 'Create worktree is not disabled for a view device');
  const why = viewer.locator('#' + await made.getAttribute('aria-describedby'));
  check(/needs \w+ access; this device has view access/.test(await why.innerText()), `the reason beside Create worktree: ${await why.innerText()}`);
  check(await why.isVisible(), 'the reason is not visible');
  await screen(viewer, 'disabled-reason');
  step('disabled with its reason');

  check(!errors.length, `the page logged errors: ${errors.join('; ')}`);
  console.log(`ok: ${screens.length} screens photographed and checked: ${screens.join(', ')}`);
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
