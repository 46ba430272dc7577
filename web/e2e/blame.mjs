// A file's blame and the whole working-tree diff, in headless Chromium
// against a real gatehouse serve and the checkout blame_page_test.go's
// blameRepo makes (story.txt with lines from three commits; 45 changed
// files, a new file and a new .env in the work tree), each result checked
// with git:
//
//   - the blame of story.txt, opened from the file's screen, shows each
//     line under the commit git blame --porcelain gives it, line for line;
//   - a file of 1,200 lines comes 500 lines at a time as it scrolls;
//   - tapping a commit's group opens that commit's screen;
//   - "All changes" on the changes screen loads the whole diff a page of
//     files at a time as it scrolls (fewer files first than in all), and
//     the files and their +/- counts match git diff --numstat, the new
//     file after them; a file closes and opens in place; "Staged" shows
//     what git diff --cached does.
//
// Screens blame-* and diff-all-* are photographed at 320, 390 and 768 px in
// light and dark and checked with axe-core (lib.mjs).
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

// gitBlame is git's own answer: [{oid, text}] per line of story.txt.
function gitBlame() {
  const out = [];
  let oid = null;
  for (const l of git('blame', '--line-porcelain', 'HEAD', '--', 'story.txt').split('\n')) {
    if (l.startsWith('\t')) out.push({ oid, text: l.slice(1) });
    else if (/^[0-9a-f]{40} \d+ \d+/.test(l)) oid = l.slice(0, 40);
  }
  return out;
}

// loadedFiles is the names in the whole diff's list now.
const loadedFiles = (page) => page.locator('.diff-all-file .name').evaluateAll((els) => els.map((e) => e.firstChild.textContent));

let browser;
let failure;
try {
  await s.started();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const page = await s.pair(browser, 'full');
  await page.getByRole('button', { name: /^repo\b/ }).click();
  await page.getByRole('heading', { name: /Not staged/ }).waitFor();

  // The blame, from the file's screen.
  await page.getByRole('button', { name: 'Files', exact: true }).click();
  await page.getByRole('button', { name: /^story\.txt/ }).click();
  await page.getByRole('button', { name: 'Blame', exact: true }).click();
  const want = gitBlame();
  await page.locator('.blame-line').nth(want.length - 1).waitFor();
  const got = await page.locator('.blame-group').evaluateAll((groups) => groups.flatMap((g) => {
    const oid = g.querySelector('.blame-commit code').textContent;
    return [...g.querySelectorAll('.blame-line')].map((l) => ({ oid, line: l.querySelector('.ln').textContent, text: l.querySelector('.text').textContent }));
  }));
  check(got.length === want.length, `the blame shows ${got.length} lines, git ${want.length}`);
  want.forEach((w, i) => {
    check(got[i].oid === w.oid.slice(0, 8) && got[i].text === w.text && got[i].line === String(i + 1),
      `line ${i + 1}: the page shows ${JSON.stringify(got[i])}, git ${w.oid.slice(0, 8)} ${JSON.stringify(w.text)}`);
  });
  const groups = await page.locator('.blame-group').count();
  check(groups >= 3, `the six lines from three commits are in ${groups} groups`);
  check(new Set(want.map((w) => w.oid)).size === 3, 'git blames story.txt on other than three commits');
  check(page.url().includes('/blame/story.txt'), `the blame's address is ${page.url()}`);
  await screen(page, 'blame');
  step('the blame of story.txt matches git blame line for line');

  // A long file's blame comes a page at a time as it scrolls.
  await page.evaluate(() => { location.hash = location.hash.replace(/\/blame\/.*$/, '/blame/long.txt'); });
  await page.getByRole('heading', { name: /Who changed each line of long\.txt/ }).waitFor();
  await page.locator('.blame-line').first().waitFor();
  const firstLines = await page.locator('.blame-line').count();
  check(firstLines > 0 && firstLines < 1200, `the first page of long.txt's blame holds ${firstLines} of 1200 lines`);
  for (let i = 0; i < 20 && (await page.locator('.blame-line').count()) < 1200; i++) {
    const n = await page.locator('.blame-line').count();
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await page.waitForFunction((was) => document.querySelectorAll('.blame-line').length > was || !document.querySelector('button.more'), n);
  }
  const lastLine = await page.locator('.blame-line').last().locator('.text').textContent();
  check(await page.locator('.blame-line').count() === 1200 && lastLine === 'line 1200 of a long file', `after scrolling: ${await page.locator('.blame-line').count()} lines, the last ${JSON.stringify(lastLine)}`);
  step(`long.txt's blame: ${firstLines} lines first, all 1200 after scrolling`);
  await page.goBack();
  await page.getByRole('heading', { name: /Who changed each line of story\.txt/ }).waitFor();

  // A tap on a group opens its commit.
  const second = want[1].oid;
  await page.locator('.blame-commit', { hasText: second.slice(0, 8) }).first().click();
  await page.getByRole('heading', { name: 'The second telling' }).waitFor();
  check(page.url().includes(`/commit/${second}`), `the commit opened at ${page.url()}`);
  step('tapping a line\'s commit opened it');

  // The whole diff, from the changes screen.
  // The changes screen, by its address as a person with a link would.
  await page.evaluate(() => { location.hash = location.hash.replace(/\/commit\/.*$/, '/changes'); });
  await page.getByRole('button', { name: 'All changes', exact: true }).click();
  const numstat = git('diff', '--no-renames', '--numstat').trim().split('\n').map((l) => l.split('\t'));
  const untracked = git('ls-files', '--others', '--exclude-standard').trim().split('\n');
  const total = numstat.length + untracked.length;
  await page.getByText(`${total} files changed.`).waitFor({ timeout: 30000 });
  const first = (await loadedFiles(page)).length;
  check(first > 0 && first < total, `the first page holds ${first} of ${total} files: not paged`);
  await screen(page, 'diff-all');
  for (let i = 0; i < 20 && (await loadedFiles(page)).length < total; i++) {
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await page.waitForFunction((n) => document.querySelectorAll('.diff-all-file').length > n || !document.querySelector('button.more'), (await loadedFiles(page)).length);
  }
  const names = await loadedFiles(page);
  check(names.length === total, `${names.length} files loaded after scrolling, git has ${total}`);
  const wantNames = [...numstat.map((n) => n[2]), ...untracked.sort()];
  check(JSON.stringify(names) === JSON.stringify(wantNames), `the files, in order:\n${names.join(' ')}\ngit:\n${wantNames.join(' ')}`);
  for (const [adds, dels, name] of numstat) {
    const label = await page.locator('.diff-all-file', { hasText: name }).locator('.diff-counts').first().getAttribute('aria-label');
    check(label === `${adds} lines added, ${dels} removed`, `${name}: the page says ${label}, git ${adds} and ${dels}`);
  }
  await page.locator('.diff-all-file', { hasText: '.env' }).getByText('Secret').waitFor();
  step(`the whole diff loaded ${first} files first, ${total} as it scrolled, matching git diff --numstat; .env marked Secret`);

  // A file closes and opens in place.
  const firstFile = page.locator('.diff-all-file').first();
  await firstFile.click();
  check(await firstFile.getAttribute('aria-expanded') === 'false', 'the first file did not close');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screen(page, 'diff-all-closed');
  await firstFile.click();
  check(await firstFile.getAttribute('aria-expanded') === 'true', 'the first file did not open again');

  // The staged side.
  git('add', 'src/f03.txt', 'notes/new.txt');
  await page.getByRole('button', { name: 'Staged', exact: true }).click();
  await page.getByText('2 files changed, staged.').waitFor({ timeout: 30000 });
  const staged = await loadedFiles(page);
  const cached = git('diff', '--cached', '--name-only').trim().split('\n');
  check(JSON.stringify(staged) === JSON.stringify(cached), `staged: the page lists ${staged}, git ${cached}`);
  await screen(page, 'diff-all-staged');
  step('the staged side lists what git diff --cached does');

  check(!errors.length, `the page logged errors: ${errors.join('; ')}`);
  console.log(`ok: ${screens.length} screens photographed and checked: ${screens.join(', ')}`);
} catch (e) {
  failure = e;
} finally {
  await s.end(browser, failure);
}
