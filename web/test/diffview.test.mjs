// The diff reader against real git: names (quoted, spaced, non-ASCII,
// renamed), statuses and +/- counts agree with git's own --numstat and
// --name-status, every numbered line is the line of the file at that
// number, hunks are counted as the host counts them, a merge's combined
// diff reads, and no input makes it throw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, chmodSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { parseDiff, wordDiff, unquote, hunkLines } from '../src/diffview.js';

function repo() {
  const dir = mkdtempSync(join(tmpdir(), 'diffview-'));
  const env = { ...process.env, HOME: dir, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...args) => execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'core.quotePath=true', '-C', dir, ...args], { env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const write = (files) => {
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
  };
  git('init', '-q', '-b', 'main');
  return { dir, git, write, done: () => rmSync(dir, { recursive: true, force: true }) };
}

const lines = (n, f) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';

test('names, statuses, counts and line numbers agree with git', () => {
  const r = repo();
  try {
    r.write({
      'plain.txt': lines(60, (i) => `line ${i}`),
      'to-rename.txt': lines(30, (i) => `keep ${i}`),
      'gone.txt': 'bye\n',
      'mode.sh': 'echo\n',
      'bin.dat': Buffer.from([0, 1, 2, 3, 0, 255]),
      'with space/na me.txt': 'a\n',
      'tést "q".txt': 'x\n',
      'no-eol.txt': 'a\nb',
    });
    r.git('add', '-A');
    r.git('commit', '-qm', 'base');
    r.write({
      'plain.txt': lines(60, (i) => (i === 3 ? 'line three, changed' : i === 50 ? 'line 50 changed' : `line ${i}`)) + 'added at the end\n',
      'to-rename.txt': lines(30, (i) => (i === 10 ? 'keep ten, edited' : `keep ${i}`)),
      'mode.sh': 'echo\n',
      'bin.dat': Buffer.from([0, 9, 9, 9, 0, 255]),
      'with space/na me.txt': 'a\nb\n',
      'tést "q".txt': 'y\n',
      'no-eol.txt': 'a\nc',
      'new file.txt': 'fresh\nlines\n',
    });
    chmodSync(join(r.dir, 'mode.sh'), 0o755);
    r.git('mv', 'to-rename.txt', 'renamed.txt');
    r.write({ 'renamed.txt': lines(30, (i) => (i === 10 ? 'keep ten, edited' : `keep ${i}`)) });
    r.git('rm', '-q', 'gone.txt');
    r.git('add', '-A');
    const diff = r.git('diff', '--cached', '-M', '--no-color', '--src-prefix=a/', '--dst-prefix=b/');
    const files = parseDiff(diff);

    // --numstat -z: "adds\tdels\t" then a name, or for a rename "\0old\0new".
    const num = r.git('diff', '--cached', '-M', '--numstat', '-z').split('\0');
    const want = {};
    for (let i = 0; i < num.length - 1; i++) {
      const [a, d, name] = num[i].split('\t');
      if (name === '') {
        want[num[i + 2]] = { adds: a, dels: d, old: num[i + 1] };
        i += 2;
      } else want[name] = { adds: a, dels: d };
    }
    assert.deepEqual(files.map((f) => f.path).sort(), Object.keys(want).sort());
    for (const f of files) {
      const w = want[f.path];
      if (w.adds === '-') assert.equal(f.binary, true, `${f.path} is binary`);
      else assert.deepEqual([f.adds, f.dels], [Number(w.adds), Number(w.dels)], f.path);
      if (w.old) assert.equal(f.oldPath, w.old);
    }
    const by = Object.fromEntries(files.map((f) => [f.path, f]));
    assert.equal(by['renamed.txt'].status, 'renamed');
    assert.equal(by['gone.txt'].status, 'deleted');
    assert.equal(by['new file.txt'].status, 'added');
    assert.equal(by['mode.sh'].status, 'mode');
    assert.equal(by['tést "q".txt'].status, 'modified');
    // Hunks as the host counts them: each line starting "@@" in a file's
    // section (gate/hunks.go splitHunks).
    for (const section of diff.split(/^(?=diff )/m).filter(Boolean)) {
      const f = files.find((x) => section.startsWith(`diff --git a/${x.oldPath} `) || section.startsWith(`diff --git "a/`) && x.path.includes('q'));
      const at = section.split('\n').filter((l) => l.startsWith('@@')).length;
      assert.equal(f.hunks.length, at, `hunks of ${f.path}`);
      assert.deepEqual(f.hunks.map((hk) => hk.index), [...Array(at).keys()]);
    }
    assert.equal(by['plain.txt'].hunks.length, 3);
    assert.equal(hunkLines(by['plain.txt'].hunks[0]), 'Lines 1–6');
    assert.ok(by['no-eol.txt'].hunks[0].lines.some((l) => l.kind === 'note'));

    // Every numbered line is the file's line at that number, on each side.
    for (const f of files) {
      if (f.binary) continue;
      const newText = f.status === 'deleted' ? '' : readFileSync(join(r.dir, f.path), 'utf8').split('\n');
      const oldText = f.status === 'added' ? '' : r.git('show', `HEAD:${f.oldPath}`).split('\n');
      for (const hk of f.hunks) {
        for (const l of hk.lines) {
          if (l.kind === 'note') continue;
          if (l.new !== null) assert.equal(newText[l.new - 1], l.text, `${f.path} new line ${l.new}`);
          if (l.old !== null) assert.equal(oldText[l.old - 1], l.text, `${f.path} old line ${l.old}`);
        }
      }
    }
  } finally {
    r.done();
  }
});

test('a merge read from git show --cc', () => {
  const r = repo();
  try {
    r.write({ 'f.txt': lines(10, (i) => `base ${i}`) });
    r.git('add', '-A');
    r.git('commit', '-qm', 'base');
    r.git('checkout', '-qb', 'side');
    r.write({ 'f.txt': lines(10, (i) => (i === 5 ? 'side 5' : `base ${i}`)) });
    r.git('commit', '-qam', 'side');
    r.git('checkout', '-q', 'main');
    r.write({ 'f.txt': lines(10, (i) => (i === 5 ? 'main 5' : `base ${i}`)) });
    r.git('commit', '-qam', 'main');
    try { r.git('merge', '-q', 'side'); } catch { /* the conflict is the point */ }
    r.write({ 'f.txt': lines(10, (i) => (i === 5 ? 'both 5' : `base ${i}`)) });
    r.git('commit', '-qam', 'merge');
    const out = r.git('show', '--cc', '--combined-all-paths', '--no-color', '--format=', 'HEAD');
    const [f] = parseDiff(out);
    assert.equal(f.combined, true);
    assert.equal(f.path, 'f.txt');
    const added = f.hunks.flatMap((hk) => hk.lines).filter((l) => l.kind === 'add');
    assert.deepEqual(added.map((l) => [l.text, l.new]), [['both 5', 5]]);
    assert.equal(f.dels, 2, 'one line removed from each parent');
  } finally {
    r.done();
  }
});

test('quoted names as git writes them', () => {
  assert.equal(unquote('"t\\303\\251st"'), 'tést');
  assert.equal(unquote('"a\\tb\\"c\\\\"'), 'a\tb"c\\');
  assert.equal(unquote('plain name'), 'plain name');
});

test('no input makes the reader throw, and a cut diff keeps what was whole', () => {
  const sample = 'diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@ fn\n a\n-b\n+c\n d\n';
  for (let cut = 0; cut <= sample.length; cut++) parseDiff(sample.slice(0, cut));
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const parts = ['diff --git ', 'diff --cc ', '@@ ', '@@@ -1 -1 +1 @@@', '@@ -x +y @@', '+', '-', ' ', '\\', '\n', '"', 'a/', 'b/', 'rename from ', '--- ', '+++ /dev/null', '\u0000', 'é'];
  for (let i = 0; i < 3000; i++) {
    let s = '';
    for (let k = 0; k < 30; k++) s += parts[Math.floor(rnd() * parts.length)];
    parseDiff(s);
  }
  assert.deepEqual(parseDiff(sample.slice(0, sample.indexOf('+c')))[0].hunks[0].lines.map((l) => l.kind), ['ctx', 'del']);
});

test('word marks, bounded', () => {
  const wd = wordDiff('const total = price * count;', 'const total = price * amount;');
  assert.deepEqual(wd.a.filter((s) => s.changed).map((s) => s.text), ['count']);
  assert.deepEqual(wd.b.filter((s) => s.changed).map((s) => s.text), ['amount']);
  assert.deepEqual(wordDiff('same', 'same').a, [{ text: 'same', changed: false }]);
  assert.equal(wordDiff('', 'new').b[0].changed, true);
  const huge = 'w '.repeat(50_000);
  const t = performance.now();
  const big = wordDiff(huge, huge + 'x');
  const ms = performance.now() - t;
  assert.equal(big.a.length, 1);
  assert.ok(ms < 50, `a 100 KB line took ${ms} ms`);
  const mid = 'ab '.repeat(290);
  const t2 = performance.now();
  wordDiff(mid, mid.replace('ab', 'cd'));
  assert.ok(performance.now() - t2 < 200, 'the largest compared line stays quick');
});
