// The readable diff (src/diff.js) against real git: names (quoted, spaced,
// non-ASCII, renamed, copied), statuses and +/- counts agree with git's own
// --name-status and --numstat; every numbered line is the file's line at
// that number on its side (the first parent's in a merge); a hunk's index is
// the position the host cuts for git.stageHunks (gate/hunks.go splitHunks);
// a cut-short diff yields a prefix of the whole one; nothing throws. Then
// the word diff and its bound, and the drawing (as data, and as elements
// through a small document stand-in).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, chmodSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import {
  parseDiff, wordDiff, unquoteName, gitLineNames, parseHunkHeader, pairWords, rows, hunkLabel,
  fileHead, collapse, renderFile, renderDiff, MAX_LINE, MAX_TOKENS,
} from '../src/diff.js';

// The flags the host forces on git diff and git show (gate/runner.go
// diffFlags, gate/diff.go, gate/branches.go showFlags).
const DIFF = ['--no-color', '--no-ext-diff', '--src-prefix=a/', '--dst-prefix=b/', '--find-renames'];
const SHOW = [...DIFF, '--cc', '--combined-all-paths', '--format='];

function repo() {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-diff-'));
  const env = { ...process.env, HOME: dir, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  const git = (...args) => execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', '-C', dir, ...args],
    { env, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  const tryGit = (...args) => { try { return git(...args); } catch (e) { return e.stdout; } };
  const write = (files) => {
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
  };
  git('init', '-q', '-b', 'main');
  return { dir, git, tryGit, write, done: () => rmSync(dir, { recursive: true, force: true }) };
}

const numbered = (n, f) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';

// sections cuts a diff as the host does (gate/patch.go splitPatch) and each
// section into its hunks (gate/hunks.go splitHunks): a new section at each
// line starting "diff ", a new hunk at each line starting "@@".
function hostHunks(text) {
  const secs = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('diff ')) secs.push([]);
    else if (secs.length && line.startsWith('@@')) secs[secs.length - 1].push([line]);
    else if (secs.length && secs[secs.length - 1].length) secs[secs.length - 1].at(-1).push(line);
  }
  return secs;
}

// nameStatus reads --name-status -z: a letter (with a score for R and C),
// then one name, or two for R and C.
function nameStatus(out) {
  const f = out.split('\0');
  const got = {};
  for (let i = 0; i < f.length - 1;) {
    const st = f[i++];
    if (st[0] === 'R' || st[0] === 'C') { got[f[i + 1]] = { st: st[0], old: f[i] }; i += 2; } else got[f[i++]] = { st: st[0] };
  }
  return got;
}

// numstat reads --numstat -z: "adds\tdels\tname", or "adds\tdels\t" then
// the old and new names for a rename or copy.
function numstat(out) {
  const f = out.split('\0');
  const got = {};
  for (let i = 0; i < f.length - 1; i++) {
    const [adds, dels, ...rest] = f[i].split('\t');
    const name = rest.join('\t'); // a name may hold a tab
    if (name === '') { got[f[i + 2]] = { adds, dels }; i += 2; } else got[name] = { adds, dels };
  }
  return got;
}

const LETTER = { modified: 'M', mode: 'M', added: 'A', deleted: 'D', renamed: 'R', copied: 'C' };

// checkLines: every line numbered on a side is that side's line there.
function checkLines(f, oldText, newText) {
  const oldLines = oldText === null ? [] : oldText.split('\n');
  const newLines = newText === null ? [] : newText.split('\n');
  let checked = 0;
  for (const hk of f.hunks) {
    let o = hk.oldStart;
    let n = hk.newStart;
    for (const l of hk.lines) {
      if (l.kind === 'note') { assert.equal(l.text, 'No newline at end of file'); continue; }
      if (l.old !== null) { assert.equal(l.old, o++, `${f.path}: old numbers run on`); assert.equal(oldLines[l.old - 1], l.text, `${f.path} old line ${l.old}`); }
      if (l.new !== null) { assert.equal(l.new, n++, `${f.path}: new numbers run on`); assert.equal(newLines[l.new - 1], l.text, `${f.path} new line ${l.new}`); }
      assert.equal(l.kind === 'add', l.old === null && l.new !== null || (f.combined && l.kind === 'add'), `${f.path} kind`);
      checked++;
    }
    assert.equal(hk.partial, false);
  }
  return checked;
}

// checkHostIndex: parsing one path's diff alone gives hunks whose index is
// the host's position, and that hunk of the host's cut is the one read.
function checkHostIndex(text, f) {
  const [host] = hostHunks(text);
  assert.equal(f.hunks.length, host.length, `${f.path}: hunks as the host counts them`);
  for (const hk of f.hunks) {
    const mine = host[hk.index];
    assert.equal(mine[0], hk.header, `${f.path}: hunk ${hk.index} is the host's`);
    const adds = mine.slice(1).filter((l) => /^[ ]*\+/.test(l) && !/^[ +]*-/.test(l)).length;
    assert.equal(hk.lines.filter((l) => l.kind === 'add').length, adds);
  }
}

function hostileTree(r) {
  r.write({
    'plain.txt': numbered(60, (i) => `line ${i}`),
    'old name.txt': numbered(30, (i) => `keep ${i}`),
    'gone.txt': 'bye\n',
    'mode.sh': 'echo\n',
    'mode and text.sh': 'echo 1\n',
    'bin.dat': Buffer.from([0, 1, 2, 3, 0, 255]),
    'with space/na me.txt': 'a\n',
    'tést "q".txt': 'x\n',
    'tab\there.txt': 'tab\n',
    'back\\slash.txt': 'b\n',
    'no-eol.txt': 'a\nb',
    'gets-eol.txt': 'a\nb',
    'dashes.txt': numbered(5, (i) => (i === 2 ? '-- not a header' : i === 4 ? '@@ nor this' : `d ${i}`)),
    'ünï/cödé.txt': 'ü\n',
  });
  r.git('add', '-A');
  r.git('commit', '-qm', 'base');
  r.write({
    'plain.txt': numbered(60, (i) => (i === 3 ? 'line three, changed' : i === 50 ? 'line 50 changed' : `line ${i}`)) + 'added at the end\n',
    'mode and text.sh': 'echo 2\n',
    'bin.dat': Buffer.from([0, 9, 9, 9, 0, 255]),
    'new.bin': Buffer.from([0, 0, 7]),
    'with space/na me.txt': 'a\nb\n',
    'tést "q".txt': 'y\n',
    'tab\there.txt': 'tab\ttab\n',
    'back\\slash.txt': 'b\\\n',
    'no-eol.txt': 'a\nc',
    'gets-eol.txt': 'a\nb\n',
    'dashes.txt': numbered(5, (i) => (i === 2 ? '++ not a header either' : i === 3 ? 'diff --git a/x b/x' : `d ${i}`)),
    'new file.txt': 'fresh\nlines\n',
    'empty new.txt': '',
    'ünï/cödé.txt': 'ü ö\n',
  });
  chmodSync(join(r.dir, 'mode.sh'), 0o755);
  chmodSync(join(r.dir, 'mode and text.sh'), 0o755);
  r.git('mv', 'old name.txt', 'new name.txt');
  r.write({ 'new name.txt': numbered(30, (i) => (i === 10 ? 'keep ten, edited' : `keep ${i}`)) });
  r.git('rm', '-q', 'gone.txt');
  r.git('add', '-A');
}

test('names, statuses, counts, line numbers and hunk positions agree with git', () => {
  const r = repo();
  try {
    hostileTree(r);
    const text = r.git('diff', '--cached', ...DIFF);
    assert.match(text, /"b\/t\\303\\251st \\"q\\".txt"/, 'git quoted a name, with octal and \\"');
    const files = parseDiff(text);
    const want = nameStatus(r.git('diff', '--cached', '--find-renames', '--name-status', '-z'));
    const counts = numstat(r.git('diff', '--cached', '--find-renames', '--numstat', '-z'));
    assert.deepEqual(files.map((f) => f.path).sort(), Object.keys(want).sort());
    let checked = 0;
    for (const f of files) {
      assert.ok(want[f.path] && counts[f.path], `${f.path} is one of git's: ${Object.keys(counts)}`);
      assert.equal(LETTER[f.status], want[f.path].st, `${f.path} status`);
      if (want[f.path].old) assert.equal(f.oldPath, want[f.path].old);
      const c = counts[f.path];
      assert.equal(f.binary, c.adds === '-', `${f.path} binary`);
      if (!f.binary) assert.deepEqual([f.adds, f.dels], [Number(c.adds), Number(c.dels)], `${f.path} counts`);
      const oldText = f.oldPath === null ? null : r.git('show', `HEAD:${f.oldPath}`);
      const newText = f.newPath === null ? null : r.git('show', `:${f.newPath}`);
      if (!f.binary) checked += checkLines(f, oldText, newText);
      // Alone, as git.diff {path} sends it for git.stageHunks.
      const one = r.git('diff', '--cached', ...DIFF, '--', f.path, ...(f.oldPath && f.oldPath !== f.path ? [f.oldPath] : []));
      const [alone] = parseDiff(one);
      assert.deepEqual(alone, f, `${f.path} read alone`);
      checkHostIndex(one, alone);
    }
    assert.ok(checked > 50, `${checked} lines checked`);
    const by = Object.fromEntries(files.map((f) => [f.path, f]));
    assert.equal(by['new name.txt'].status, 'renamed');
    assert.equal(by['new name.txt'].oldPath, 'old name.txt');
    assert.equal(fileHead(by['new name.txt']).name, 'old name.txt → new name.txt');
    assert.equal(by['gone.txt'].newPath, null);
    assert.equal(by['new file.txt'].oldPath, null);
    assert.equal(by['mode.sh'].status, 'mode');
    assert.deepEqual([by['mode.sh'].oldMode, by['mode.sh'].newMode], ['100644', '100755']);
    assert.equal(by['mode and text.sh'].status, 'modified');
    assert.equal(by['empty new.txt'].status, 'added');
    assert.equal(by['empty new.txt'].hunks.length, 0);
    assert.equal(by['new.bin'].status, 'added');
    assert.equal(by['bin.dat'].binary, true);
    assert.ok(by['tab\there.txt'] && by['back\\slash.txt'] && by['ünï/cödé.txt'] && by['with space/na me.txt']);
    assert.deepEqual(by['plain.txt'].hunks.map((hk) => hk.index), [0, 1, 2]);
    assert.equal(hunkLabel(by['plain.txt'].hunks[0]), 'Lines 1–6');
    assert.equal(by['no-eol.txt'].hunks[0].lines.filter((l) => l.kind === 'note').length, 2);
    // Content that looks like headers stays content.
    assert.deepEqual(by['dashes.txt'].hunks[0].lines.filter((l) => l.kind !== 'ctx').map((l) => l.text),
      ['-- not a header', 'd 3', '@@ nor this', '++ not a header either', 'diff --git a/x b/x', 'd 4']);
    // git's binary patch form is binary too, and its data never names a file.
    const bin = parseDiff(r.git('diff', '--cached', '--binary', ...DIFF, '--', 'bin.dat', 'new.bin'));
    assert.deepEqual(bin.map((f) => [f.path, f.binary, f.status, f.hunks.length]), [['bin.dat', true, 'modified', 0], ['new.bin', true, 'added', 0]]);
  } finally {
    r.done();
  }
});

test('copies, and the work tree against the index', () => {
  const r = repo();
  try {
    r.write({ 'src.txt': numbered(40, (i) => `source ${i}`) });
    r.git('add', '-A');
    r.git('commit', '-qm', 'base');
    r.write({ 'copy of src.txt': numbered(40, (i) => (i === 7 ? 'copied, then changed' : `source ${i}`)) });
    r.git('add', '-A');
    const text = r.git('diff', '--cached', ...DIFF, '-C', '--find-copies-harder');
    const [f] = parseDiff(text);
    assert.deepEqual([f.status, f.oldPath, f.newPath, f.adds, f.dels], ['copied', 'src.txt', 'copy of src.txt', 1, 1]);
    checkLines(f, r.git('show', 'HEAD:src.txt'), r.git('show', ':copy of src.txt'));
    writeFileSync(join(r.dir, 'src.txt'), numbered(41, (i) => (i === 41 ? 'appended in the work tree' : `source ${i}`)));
    const [w] = parseDiff(r.git('diff', ...DIFF));
    assert.deepEqual([w.path, w.adds, w.dels, w.status], ['src.txt', 1, 0, 'modified']);
    checkLines(w, r.git('show', ':src.txt'), readFileSync(join(r.dir, 'src.txt'), 'utf8'));
  } finally {
    r.done();
  }
});

// merged makes a merge with two conflicts: f.txt resolved keeping both
// sides' lines, g.txt resolved with a line of its own.
function merged(r) {
  r.write({ 'f.txt': numbered(12, (i) => `${i}`), 'g.txt': numbered(12, (i) => `${i}`), 'h s.txt': numbered(8, (i) => `h${i}`) });
  r.git('add', '-A');
  r.git('commit', '-qm', 'base');
  r.git('checkout', '-qb', 'side');
  r.write({ 'f.txt': numbered(12, (i) => (i === 3 ? 'three side' : i === 9 ? 'nine side' : `${i}`)), 'g.txt': numbered(12, (i) => (i === 5 ? 'five side' : `${i}`)), 'h s.txt': numbered(8, (i) => (i === 2 ? 'side' : `h${i}`)) });
  r.git('commit', '-qam', 'side');
  r.git('checkout', '-q', 'main');
  r.write({ 'f.txt': numbered(12, (i) => (i === 3 ? 'three main' : `${i}`)), 'g.txt': numbered(13, (i) => (i === 5 ? 'five main' : i === 13 ? 'tail main' : `${i}`)), 'h s.txt': numbered(8, (i) => (i === 2 ? 'main' : `h${i}`)) });
  r.git('commit', '-qam', 'main');
  r.tryGit('merge', '-q', 'side');
}

test('a merge: git show --cc and an unmerged path, numbered by the first parent', () => {
  const r = repo();
  try {
    merged(r);
    // Unmerged, as git.diff shows it: the work tree (with markers)
    // against "ours" (:2:), git's first parent here.
    for (const p of ['f.txt', 'h s.txt']) {
      const one = r.git('diff', ...DIFF, '--', p);
      assert.match(one, /^diff --cc /);
      const [u] = parseDiff(one);
      assert.deepEqual([u.combined, u.path], [true, p]);
      assert.ok(checkLines(u, r.git('show', `:2:${p}`), readFileSync(join(r.dir, p), 'utf8')) > 3);
      checkHostIndex(one, u);
    }
    r.write({
      'f.txt': numbered(13, (i) => (i <= 2 ? `${i}` : i === 3 ? 'three main' : i === 4 ? 'three side' : i === 10 ? 'nine side' : `${i - 1}`)),
      'g.txt': numbered(12, (i) => (i === 5 ? 'five merged' : `${i}`)),
      'h s.txt': numbered(8, (i) => (i === 2 ? 'main and side' : `h${i}`)),
    });
    r.git('commit', '-qam', 'merge');
    const text = r.git('show', ...SHOW, 'HEAD');
    const files = parseDiff(text);
    assert.deepEqual(files.map((f) => f.path), ['f.txt', 'g.txt', 'h s.txt']);
    assert.deepEqual(files.map((f) => f.path), r.git('show', '--cc', '--name-only', '--format=', 'HEAD').trim().split('\n'));
    for (const f of files) {
      assert.equal(f.combined, true);
      assert.equal(f.status, 'modified');
      checkLines(f, r.git('show', `HEAD^1:${f.path}`), r.git('show', `HEAD:${f.path}`));
    }
    const g = files[1];
    assert.deepEqual(g.hunks[0].lines.filter((l) => l.kind !== 'ctx').map((l) => [l.kind, l.old, l.new, l.text]),
      [['del', 5, null, 'five main'], ['del', null, null, 'five side'], ['add', null, 5, 'five merged']]);
    assert.deepEqual([g.adds, g.dels], [1, 2]);
    assert.match(g.hunks[0].header, /^@@@ /);
  } finally {
    r.done();
  }
});

test('a diff cut short yields what was complete: a prefix of the whole', () => {
  const r = repo();
  try {
    hostileTree(r);
    const text = r.git('diff', '--cached', ...DIFF);
    const whole = parseDiff(text);
    const ends = [...text.matchAll(/\n/g)].map((m) => m.index + 1);
    for (const end of ends) {
      const part = parseDiff(text.slice(0, end));
      assert.ok(part.length <= whole.length);
      part.forEach((f, i) => {
        const w = whole[i];
        assert.equal(f.hunks.length <= w.hunks.length, true);
        f.hunks.forEach((hk, k) => {
          assert.equal(hk.index, w.hunks[k].index);
          assert.deepEqual(hk.lines, w.hunks[k].lines.slice(0, hk.lines.length), `cut at ${end}: ${f.path} hunk ${k}`);
          if (hk.partial) assert.equal(f.partial, true);
        });
      });
    }
    // Cut inside a line: that line is left out, never half read.
    const mid = text.indexOf('+line three, changed') + 8;
    const cut = parseDiff(text.slice(0, mid)).find((f) => f.path === 'plain.txt');
    assert.ok(!cut.hunks[0].lines.some((l) => l.text.startsWith('line th')));
    assert.equal(cut.hunks[0].partial, true);
    for (let i = 0; i < text.length; i += 7) parseDiff(text.slice(0, i));
  } finally {
    r.done();
  }
});

test('no input makes it throw', () => {
  let seed = 42;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
  const pieces = ['diff --git a/x b/x\n', 'diff --cc x\n', '@@ -1,2 +1,3 @@ f\n', '@@@ -1 -1 +1 @@@\n', '@@ -99999999999 +1 @@\n',
    '+a\n', '-b\n', ' c\n', '\\ No newline\n', '--- a/x\n', '+++ /dev/null\n', 'rename from "\\3\n', 'Binary files x and y differ\n',
    '"', '\\', '\n', '\t', '\u0000', '\ud800', '@@', '++-', ' -+\n', 'new file mode 100644\n', 'old mode 1\n'];
  for (let n = 0; n < 3000; n++) {
    let s = '';
    const len = rnd(40);
    for (let i = 0; i < len; i++) s += rnd(3) ? pieces[rnd(pieces.length)] : String.fromCharCode(rnd(0x10000));
    const files = parseDiff(s);
    for (const f of files) {
      let prev = -1;
      for (const hk of f.hunks) {
        assert.ok(hk.index > prev);
        prev = hk.index;
        for (const l of hk.lines) assert.ok(['add', 'del', 'ctx', 'note'].includes(l.kind));
      }
      rows(f, { hunkAction: { label: 'Stage hunk', onclick() {} } });
    }
  }
  for (const x of [undefined, null, 42, {}, [], '', '\n', 'diff \n', 'diff --git\n', 'diff --git \n@@ -1 +1 @@\n+x\n']) parseDiff(x);
  // An "@@" line the reader cannot read still takes its place in the count.
  const [f] = parseDiff('diff --git a/x b/x\n@@ bogus @@\n+x\n@@ -1 +1 @@\n-a\n+b\n');
  assert.deepEqual(f.hunks.map((hk) => hk.index), [1]);
});

test('quoted names, git lines and hunk headers', () => {
  const cases = [
    ['plain', 'plain'], ['"a/t\\303\\251st"', 'a/tést'], ['"tab\\there"', 'tab\there'], ['"q\\"uote"', 'q"uote'],
    ['"back\\\\slash"', 'back\\slash'], ['"\\a\\b\\f\\n\\r\\v"', '\x07\b\f\n\r\v'], ['"rawé"', 'rawé'],
    ['"', null], ['"bad\\q"', null], ['"trail\\"', null], ['"in"side"', null], ['"\\400"', null], ['', null],
  ];
  for (const [q, want] of cases) assert.equal(unquoteName(q), want, q);
  assert.deepEqual(gitLineNames('a/x y b/x y'), ['x y', 'x y']);
  assert.deepEqual(gitLineNames('"a/t\\303\\251" "b/t\\303\\251"'), ['té', 'té']);
  assert.deepEqual(gitLineNames('a/x "b/y\\tz"'), ['x', 'y\tz']);
  assert.deepEqual(gitLineNames('a/one b/two'), [null, null]);
  assert.deepEqual(gitLineNames('a/x b/ c/x b/ c'), [null, null]);
  const hh = parseHunkHeader('@@ -3 +3 @@');
  assert.deepEqual([hh.olds, hh.new, hh.section], [[{ start: 3, count: 1 }], { start: 3, count: 1 }, '']);
  assert.equal(parseHunkHeader('@@ -1,2 +1,3 @@ func (x) @@ y').section, 'func (x) @@ y');
  assert.equal(parseHunkHeader('@@@ -1,2 -1,3 +1,4 @@@').olds.length, 2);
  for (const bad of ['@@ -1 +1 @@@', '@@@ -1 +1 @@@', '@@ -1 +1', '@@ +1 -1 @@', '@@ -1073741825 +1 @@', '@@ -a +1 @@']) assert.equal(parseHunkHeader(bad), null, bad);
});

const join2 = (segs) => segs.map((s) => s.text).join('');

test('wordDiff marks changed words, within its bound', () => {
  const d = wordDiff('const x = foo(a, b);', 'const y = foo(a, c);');
  assert.deepEqual(d.a.filter((s) => s.changed).map((s) => s.text), ['x', 'b']);
  assert.deepEqual(d.b.filter((s) => s.changed).map((s) => s.text), ['y', 'c']);
  assert.deepEqual(wordDiff('same line', 'same line'), { a: [{ text: 'same line', changed: false }], b: [{ text: 'same line', changed: false }] });
  assert.deepEqual(wordDiff('', ''), { a: [], b: [] });
  assert.deepEqual(wordDiff('', 'new'), { a: [], b: [{ text: 'new', changed: true }] });
  assert.deepEqual(wordDiff('the quick brown fox', 'the slow red fox').b.map((s) => [s.text, s.changed]), [['the ', false], ['slow red', true], [' fox', false]]);
  assert.deepEqual(wordDiff('naïve café', 'naïve cafés').b.map((s) => s.changed), [false, true]);
  // Every side joins back to its line, on any input.
  let seed = 7;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
  const alpha = 'ab (){};,.  \t—é😀';
  const word = () => Array.from({ length: rnd(30) }, () => [...alpha][rnd([...alpha].length)]).join('');
  for (let i = 0; i < 500; i++) {
    const a = word();
    const b = word();
    const w = wordDiff(a, b);
    assert.equal(join2(w.a), a);
    assert.equal(join2(w.b), b);
  }
  // The bound, counted as the table cells filled rather than timed (a
  // loaded machine stretches any time): a hostile 100 KB line is one
  // change and fills none; so do lines past either bound; the longest
  // lines still compared fill at most MAX_TOKENS² (the timings are only
  // printed, never checked; the clock is not what is proved).
  const cells = (a, b) => {
    const meter = { cells: 0 };
    const t = performance.now();
    const d = wordDiff(a, b, meter);
    return { d, cells: meter.cells, ms: performance.now() - t };
  };
  const big = 'x '.repeat(50_000);
  const w = cells(big, big + 'y');
  assert.deepEqual([w.d.a.length, w.d.a[0].changed, w.d.b[0].text.length], [1, true, 100_001]);
  assert.equal(w.cells, 0, '100 KB line: no comparison');
  const over = cells('a '.repeat(151), 'a');
  assert.deepEqual([over.d.a.length, over.cells], [1, 0], 'over 300 tokens: whole, no comparison');
  const long = cells('a'.repeat(MAX_LINE + 1), 'a');
  assert.deepEqual([long.d.b[0].changed, long.cells], [true, 0], 'over 2,000 characters: whole, no comparison');
  const near = 'a '.repeat(150).slice(0, 299);
  const n = cells(near, near.replace(/a/g, 'b'));
  assert.equal(n.cells, 299 * 299, '299 tokens a side: one cell per pair of tokens');
  const full = cells('a '.repeat(150), 'b '.repeat(150));
  assert.equal(full.cells, MAX_TOKENS * MAX_TOKENS, `${MAX_TOKENS} tokens a side: the most a line costs`);
  assert.ok(full.cells <= (MAX_TOKENS + 1) ** 2, `${full.cells} cells for the longest compared lines`);
  // A meter adds up over calls, so one can bound many lines.
  const meter = { cells: 0 };
  wordDiff('a b', 'a c', meter);
  wordDiff('a b', 'a c', meter);
  assert.equal(meter.cells, 2 * 3 * 3, 'two 3-token pairs');
  console.log(`# wordDiff: 100 KB line ${w.ms.toFixed(2)} ms, 299-token lines ${n.ms.toFixed(2)} ms, ${MAX_TOKENS}-token lines ${full.cells} cells in ${full.ms.toFixed(2)} ms`);
});

const sample = `diff --git a/src/app.js b/src/app.js
index 1111111..2222222 100644
--- a/src/app.js
+++ b/src/app.js
@@ -40,7 +40,8 @@ function start(config) {
 const a = 1;
-const port = 8080;
-const host = "localhost";
+const port = 9090;
+const host = "0.0.0.0";
+const tls = true;
 run(<img src=x onerror=alert(1)>);
 end();
 done();
@@ -90,3 +91,2 @@ function stop() {
 one
-two
 three
`;

test('rows: the drawing as data', () => {
  const [f] = parseDiff(sample);
  const got = [];
  const rs = rows(f, { hunkAction: { label: 'Stage hunk', onclick: (i) => got.push(i) } });
  const bars = rs.filter((r) => r.type === 'hunk');
  assert.deepEqual(bars.map((b) => [b.label, b.section, b.action.ariaLabel]), [
    ['Lines 40–47', 'function start(config) {', 'Stage hunk 1 of 2 (lines 40–47)'],
    ['Lines 91–92', 'function stop() {', 'Stage hunk 2 of 2 (lines 91–92)'],
  ]);
  bars[1].action.run();
  assert.deepEqual(got, [1]);
  const lines = rs.filter((r) => r.type === 'line');
  assert.deepEqual(lines.slice(0, 6).map((r) => [r.kind, r.old, r.new, r.sign, r.spoken]), [
    ['ctx', 40, 40, '', ''], ['del', 41, null, '−', 'removed: '], ['del', 42, null, '−', 'removed: '],
    ['add', null, 41, '+', 'added: '], ['add', null, 42, '+', 'added: '], ['add', null, 43, '+', 'added: '],
  ]);
  // The i-th removed line pairs with the i-th added one; the third added
  // line has no partner and no marks.
  assert.deepEqual(lines[1].parts.filter((p) => p.changed).map((p) => p.text), ['8080']);
  assert.deepEqual(lines[3].parts.filter((p) => p.changed).map((p) => p.text), ['9090']);
  assert.deepEqual(lines[4].parts.filter((p) => p.changed).map((p) => p.text), ['0.0.0.0']);
  assert.deepEqual(lines[5].parts, [{ text: 'const tls = true;', changed: false }]);
  assert.equal(hunkLabel({ oldStart: 7, oldCount: 3, newStart: 6, newCount: 0 }), 'Lines 7–9 (removed)');
  assert.equal(hunkLabel({ oldStart: 7, oldCount: 1, newStart: 7, newCount: 1 }), 'Line 7');
  const off = rows(f, { hunkAction: { label: 'Unstage hunk', disabled: true, why: 'Not on this grant.', onclick: () => assert.fail('ran') } });
  off.filter((r) => r.type === 'hunk').forEach((b) => { assert.deepEqual([b.action.disabled, b.action.why], [true, 'Not on this grant.']); b.action.run(); });
  // A combined diff's hunks: the host never stages them.
  const [cc] = parseDiff('diff --cc x\n--- a/x\n--- a/x\n+++ b/x\n@@@ -1 -1 +1 @@@\n- a\n -b\n++c\n');
  const bar = rows(cc, { hunkAction: { label: 'Stage hunk', onclick: () => assert.fail('ran') } })[0];
  assert.equal(bar.action.disabled, true);
  assert.match(bar.action.why, /merge conflict/);
  const pairs = pairWords([{ kind: 'del', text: 'totally' }, { kind: 'add', text: 'different' }]);
  assert.equal(pairs.size, 0, 'nothing in common: no marks');
  const many = Array.from({ length: 5 }, (_, i) => ({ type: 'line', i }));
  assert.deepEqual(collapse([{ type: 'hunk' }, ...many], 3).rest.map((r) => r.i), [3, 4]);
  assert.equal(collapse(many, 5).rest.length, 0);
});

// A document stand-in: enough for h() and renderFile, and it refuses
// innerHTML so nothing can be parsed as markup.
class El {
  constructor(tag) { this.tag = tag; this.kids = []; this.attrs = {}; this.className = ''; this.on = {}; this.nodeType = 1; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return this.attrs[k] ?? null; }
  addEventListener(t, f) { this.on[t] = f; }
  append(...xs) { for (const x of xs) { if (typeof x !== 'string') x.parent = this; this.kids.push(x); } }
  remove() { this.parent.kids = this.parent.kids.filter((k) => k !== this); }
  focus() { this.focused = true; }
  set innerHTML(_) { throw new Error('innerHTML'); }
  get textContent() { return this.kids.map((k) => (typeof k === 'string' ? k : k.textContent)).join(''); }
  all(pred) { return [...(pred(this) ? [this] : []), ...this.kids.flatMap((k) => (typeof k === 'string' ? [] : k.all(pred)))]; }
  cls(c) { return this.all((e) => e.className.split(' ').includes(c)); }
  tags(t) { return this.all((e) => e.tag === t); }
}
globalThis.document = { createElement: (t) => new El(t) };

test('renderFile and renderDiff draw the rows as elements', () => {
  const [f] = parseDiff(sample);
  const el = renderFile(f, { hunkAction: { label: 'Stage hunk', onclick() {} } });
  assert.equal(el.tag, 'section');
  assert.equal(el.tags('h3')[0].textContent, 'src/app.js');
  assert.equal(renderFile(f, { heading: 'h2' }).tags('h2')[0].textContent, 'src/app.js');
  assert.equal(renderFile(f, { heading: 'script' }).tags('h3').length, 1, 'only a heading');
  assert.equal(el.cls('diff-status')[0].textContent, 'modified');
  const counts = el.cls('diff-counts')[0];
  assert.deepEqual([counts.attrs.role, counts.attrs['aria-label'], counts.textContent], ['img', '3 lines added, 3 removed', '+3 −3']);
  assert.deepEqual(el.cls('diff-range').map((e) => e.textContent), ['Lines 40–47', 'Lines 91–92']);
  assert.deepEqual(el.tags('button').map((b) => b.attrs['aria-label']), ['Stage hunk 1 of 2 (lines 40–47)', 'Stage hunk 2 of 2 (lines 91–92)']);
  assert.deepEqual(el.tags('mark').map((m) => m.textContent), ['8080', 'localhost', '9090', '0.0.0.0']);
  for (const n of el.cls('diff-num')) assert.equal(n.attrs['aria-hidden'], 'true');
  assert.deepEqual(el.cls('sr').map((s) => s.textContent), ['removed: ', 'removed: ', 'added: ', 'added: ', 'added: ', 'removed: ']);
  assert.equal(el.cls('del')[0].cls('diff-code')[0].textContent, 'removed: const port = 8080;');
  assert.ok(el.all((e) => e.kids.includes('run(<img src=x onerror=alert(1)>);')).length === 1, 'a line is text');
  assert.ok(el.className.includes('diff-w2'));
  // Disabled: reachable, explained, and inert.
  const off = renderFile(f, { hunkAction: { label: 'Unstage hunk', disabled: true, why: 'Ask for the change grant.', onclick: () => assert.fail('ran') } });
  const b = off.tags('button')[0];
  const why = off.all((e) => e.attrs.id === b.attrs['aria-describedby'])[0];
  assert.deepEqual([b.attrs['aria-disabled'], b.attrs.title, why.textContent, why.className], ['true', 'Ask for the change grant.', 'Ask for the change grant.', 'sr']);
  b.on.click();
  // Long files wait behind "Show all N lines", drawn in place.
  const long = parseDiff(`diff --git a/l b/l\nnew file mode 100644\n--- /dev/null\n+++ b/l\n@@ -0,0 +1,700 @@\n${'+x\n'.repeat(700)}`)[0];
  const le = renderFile(long, { collapseAt: 250 });
  assert.equal(le.cls('diff-line').length, 250);
  const more = le.cls('diff-more')[0];
  assert.equal(more.textContent, 'Show all 700 lines');
  more.on.click();
  assert.equal(le.cls('diff-line').length, 700);
  assert.equal(le.cls('diff-more').length, 0);
  assert.equal(le.cls('diff-line')[250].focused, true);
  assert.equal(renderFile(long).cls('diff-line').length, 300);
  assert.ok(renderFile(long).className.includes('diff-w3'));
  // Binary, mode-only, rename.
  const [bin] = parseDiff('diff --git a/b.png b/b.png\nindex 1..2 100644\nBinary files a/b.png and b/b.png differ\n');
  assert.equal(renderFile(bin).cls('diff-empty')[0].textContent, 'Binary file, not shown.');
  assert.equal(renderFile(bin).cls('diff-counts').length, 0);
  const [mode] = parseDiff('diff --git a/m.sh b/m.sh\nold mode 100644\nnew mode 100755\n');
  assert.equal(renderFile(mode).cls('diff-status')[0].textContent, 'mode 100644 → 100755');
  const [mv] = parseDiff('diff --git a/a b c b/d e f\nsimilarity index 100%\nrename from a b c\nrename to d e f\n');
  assert.equal(renderFile(mv).tags('h3')[0].textContent, 'a b c → d e f');
  assert.equal(renderFile(mv).cls('diff-empty')[0].textContent, 'Renamed without changes.');
  // The container.
  assert.equal(renderDiff([f, bin]).className, 'diff');
  assert.equal(renderDiff([f, bin], { wrap: false }).className, 'diff nowrap');
  assert.equal(renderDiff([f, bin]).kids.length, 2);
});

// The stylesheet: every class the drawing uses is styled, no colour
// without its dark twin, and the changed-word marks keep AA contrast.
test('diff.css styles every class and keeps marks readable in both schemes', () => {
  const css = readFileSync(new URL('../src/diff.css', import.meta.url), 'utf8');
  const src = readFileSync(new URL('../src/diff.js', import.meta.url), 'utf8');
  assert.doesNotMatch(src, /innerHTML|outerHTML|insertAdjacentHTML|style\s*[:=]|setAttribute\(\s*['"]style/);
  // Every class on every element drawn for the files these tests draw.
  const used = new Set();
  const [f] = parseDiff(sample);
  const noeol = parseDiff('diff --git a/n b/n\n--- a/n\n+++ b/n\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n')[0];
  const bin = parseDiff('diff --git a/b b/b\nBinary files a/b and b/b differ\n')[0];
  const drawn = [renderDiff([f, noeol, bin], { wrap: false, collapseAt: 3, hunkAction: { label: 'Stage hunk', onclick() {} } }),
    renderFile(f, { hunkAction: { label: 'Stage hunk', disabled: true, why: 'No.' } })];
  for (const el of drawn) for (const e of el.all(() => true)) for (const c of e.className.split(' ')) if (c) used.add(c);
  assert.ok(used.size > 15, [...used].join(' '));
  for (const c of [...used, 'add', 'del', 'ctx', 'noeol', 'nowrap', 'diff', 'diff-w1', 'diff-w7']) assert.match(css, new RegExp(`\\.${c}\\b`), `.${c} is styled`);
  const vars = (block) => Object.fromEntries([...block.matchAll(/(--[\w-]+):\s*(#[0-9a-f]{6}|var\(--[\w-]+\))/gi)].map((m) => [m[1], m[2]]));
  const style = readFileSync(new URL('../src/style.css', import.meta.url), 'utf8');
  const [lightRoot, darkRoot] = [style.split('@media (prefers-color-scheme: dark)')[0], style.split('@media (prefers-color-scheme: dark)')[1]];
  const [light, dark] = css.split('@media (prefers-color-scheme: dark)');
  const lum = (hex) => {
    const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const ratio = (x, y) => { const [a, b] = [lum(x), lum(y)].sort((p, q) => q - p); return (a + 0.05) / (b + 0.05); };
  const resolve = (mine, root) => Object.fromEntries(Object.entries(mine).map(([k, v]) => [k, v.startsWith('var(') ? root[v.slice(4, -1)] : v]));
  for (const [name, root] of [['light', vars(lightRoot)], ['dark', { ...vars(lightRoot), ...vars(darkRoot) }]]) {
    const mine = resolve(name === 'light' ? vars(light) : { ...vars(light), ...vars(dark) }, root);
    for (const v of ['--diff-addmark', '--diff-delmark', '--diff-addbg', '--diff-delbg', '--diff-hunkbg']) {
      assert.ok(mine[v], `${name} ${v}`);
      const r = ratio(root['--fg'], mine[v]);
      assert.ok(r >= 4.5, `${name} ${v} ${mine[v]} on text ${root['--fg']}: ${r.toFixed(2)}`);
    }
    for (const v of ['--diff-addbg', '--diff-delbg', '--diff-hunkbg']) {
      const r = ratio(root['--muted'], mine[v]);
      assert.ok(r >= 4.5, `${name} line numbers on ${v}: ${r.toFixed(2)}`);
    }
    for (const [bg, mark] of [['--diff-addbg', '--diff-addmark'], ['--diff-delbg', '--diff-delmark']]) {
      assert.ok(ratio(mine[bg], mine[mark]) >= 1.3, `${name} ${mark} stands out from ${bg}: ${ratio(mine[bg], mine[mark]).toFixed(2)}`);
    }
  }
});
