// The readable diff: git's diff text (as git.diff and git.show send it) read
// into files, hunks and numbered lines, changed words found, and drawn with
// h() (never as HTML: every name and line is the repository's, so the
// attacker's).
//
// What it promises:
//   - parseDiff never throws, on any string. What git prints is read as git
//     means it (quoted names, renames, binary files, combined diffs); a line
//     it does not know is left out; a diff cut short yields the lines that
//     were complete, and the hunk they belong to says partial.
//   - A hunk's index is the position the host gives it for git.stageHunks:
//     gate/hunks.go splitHunks counts every line that starts "@@" in a
//     file's section (the text from one "diff " line to the next), so this
//     counts them the same way, even a header it cannot read or a combined
//     "@@@" one (which the host then refuses to stage).
//   - wordDiff is bounded: past MAX_TOKENS tokens or MAX_LINE characters a
//     side, a line is one change (the comparison is quadratic, and a line's
//     length is the repository's to choose). Its work is counted, not
//     timed: given a meter it adds the table cells it fills, at most
//     MAX_TOKENS² a pair of lines.
//
// rows() is the drawing as data (what renderFile shows, in order), so it
// can be tested without a browser; renderFile maps it to elements.
import { h } from './dom.js';

export const MAX_TOKENS = 300;
export const MAX_LINE = 2000;
export const COLLAPSE_AT = 300;

// The host reads hunk numbers up to 2^30 (gate/hunks.go parseHunkHeader);
// a bigger one is not git's.
const MAX_NUMBER = 2 ** 30;

// ---------------------------------------------------------------------
// Names

const ESCAPES = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
const utf8 = new TextEncoder();

// unquoteName reads a name as git writes it: bare, or in double quotes
// with C escapes (\t, \", \\, and three octal digits per byte of UTF-8).
// It returns null for a quoted name git would not write.
export function unquoteName(s) {
  if (typeof s !== 'string' || s === '') return null;
  if (!s.startsWith('"')) return s;
  if (s.length < 2 || !s.endsWith('"')) return null;
  const body = s.slice(1, -1);
  const bytes = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '"') return null;
    if (c !== '\\') {
      const cp = body.codePointAt(i);
      if (cp > 0xffff) i++;
      for (const b of utf8.encode(String.fromCodePoint(cp))) bytes.push(b);
      continue;
    }
    const e = body[++i];
    if (e === undefined) return null;
    if (e in ESCAPES) { bytes.push(ESCAPES[e]); continue; }
    const oct = body.slice(i, i + 3);
    if (!/^[0-3][0-7]{2}$/.test(oct)) return null;
    bytes.push(parseInt(oct, 8));
    i += 2;
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function stripPrefix(name, prefix) {
  return name !== null && name.startsWith(prefix) ? name.slice(prefix.length) : null;
}

// closingQuote finds the quote that ends the quoted name at the start of s.
function closingQuote(s) {
  for (let i = 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i;
  }
  return -1;
}

// gitLineNames reads "diff --git a/X b/Y" as the host does (gate/patch.go
// parseGitLine): a quoted name ends at its quote; a bare pair is split in
// the middle when both halves name the same file. Anything else (a rename
// whose names hold " b/") is left to the rename lines: [null, null].
export function gitLineNames(rest) {
  let a = null;
  let b = null;
  if (rest.startsWith('"')) {
    const end = closingQuote(rest);
    if (end > 0 && rest[end + 1] === ' ') {
      a = unquoteName(rest.slice(0, end + 1));
      b = unquoteName(rest.slice(end + 2));
    }
  } else if (rest.endsWith('"') && rest.includes(' "b/')) {
    const i = rest.indexOf(' "b/');
    a = rest.slice(0, i);
    b = unquoteName(rest.slice(i + 1));
  } else if (rest.length % 2 === 1 && rest[(rest.length - 1) / 2] === ' ') {
    const n = (rest.length - 1) / 2;
    if (rest.slice(2, n) === rest.slice(n + 3)) [a, b] = [rest.slice(0, n), rest.slice(n + 1)];
  }
  a = stripPrefix(a, 'a/');
  b = stripPrefix(b, 'b/');
  return a === null || b === null ? [null, null] : [a, b];
}

// ---------------------------------------------------------------------
// Hunk headers

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@ section" and the combined
// form "@@@ -a,b -c,d +e,f @@@ section" (one "-" range per parent, one "@"
// more than parents on each side). A count left out is 1, as in git.
export function parseHunkHeader(line) {
  const m = /^(@@+) ((?:-\d+(?:,\d+)? )+)\+(\d+)(?:,(\d+))? (@@+)(?: (.*))?$/s.exec(line);
  if (!m || m[1] !== m[5]) return null;
  const olds = m[2].trim().split(' ').map((r) => {
    const [start, count = '1'] = r.slice(1).split(',');
    return { start: Number(start), count: Number(count) };
  });
  if (olds.length !== m[1].length - 1) return null;
  const nw = { start: Number(m[3]), count: m[4] === undefined ? 1 : Number(m[4]) };
  const nums = [nw.start, nw.count, ...olds.flatMap((o) => [o.start, o.count])];
  if (nums.some((n) => !(n <= MAX_NUMBER))) return null;
  return { olds, new: nw, section: m[6] || '' };
}

// ---------------------------------------------------------------------
// Reading a diff

function newFile(first) {
  const f = {
    oldPath: null, newPath: null, path: '', status: 'modified', binary: false, combined: false,
    adds: 0, dels: 0, hunks: [], oldMode: null, newMode: null, partial: false,
  };
  const s = { f, added: false, deleted: false, renamed: false, copied: false, names: {}, inHeader: true, count: 0 };
  if (first.startsWith('diff --git ')) {
    [s.names.gitA, s.names.gitB] = gitLineNames(first.slice('diff --git '.length));
  } else {
    f.combined = true;
    s.names.combined = unquoteName(first.replace(/^diff --(?:cc|combined) /, ''));
  }
  return s;
}

// header reads one line of a file's header (before its first hunk), as
// git writes them (diff.c, combine-diff.c). Other lines are left out.
function header(s, line) {
  const { f, names } = s;
  const after = (p) => (line.startsWith(p) ? line.slice(p.length) : null);
  let v;
  if ((v = after('new file mode ')) !== null) { s.added = true; f.newMode = v; }
  else if ((v = after('deleted file mode ')) !== null) { s.deleted = true; f.oldMode = v; }
  else if ((v = after('old mode ')) !== null) f.oldMode = v;
  else if ((v = after('new mode ')) !== null) f.newMode = v;
  else if ((v = after('rename from ')) !== null) { s.renamed = true; names.from = unquoteName(v); }
  else if ((v = after('rename to ')) !== null) { s.renamed = true; names.to = unquoteName(v); }
  else if ((v = after('copy from ')) !== null) { s.copied = true; names.from = unquoteName(v); }
  else if ((v = after('copy to ')) !== null) { s.copied = true; names.to = unquoteName(v); }
  else if ((v = after('--- ')) !== null) {
    const name = unquoteName(v.replace(/\t$/, ''));
    if (name === '/dev/null') s.added = true;
    else if (!('minus' in names)) names.minus = stripPrefix(name, 'a/'); // the first parent's
  } else if ((v = after('+++ ')) !== null) {
    const name = unquoteName(v.replace(/\t$/, ''));
    if (name === '/dev/null') s.deleted = true;
    else names.plus = stripPrefix(name, 'b/');
  } else if (line.startsWith('Binary files ') || line === 'GIT binary patch') {
    f.binary = true;
    s.inHeader = false; // a binary patch's lines are data, never names
    if (line.startsWith('Binary files /dev/null and ')) s.added = true;
    if (line.endsWith(' and /dev/null differ')) s.deleted = true;
  }
}

// finish settles a file's names and status from what its header said.
function finish(s) {
  const { f, names } = s;
  const first = (...xs) => xs.find((x) => typeof x === 'string' && x !== '') ?? null;
  if (f.combined) {
    f.newPath = first(names.plus, names.combined);
    f.oldPath = first(names.minus, names.combined);
  } else {
    f.oldPath = first(names.from, names.minus, names.gitA);
    f.newPath = first(names.to, names.plus, names.gitB);
  }
  if (s.deleted) f.status = 'deleted';
  else if (s.added) f.status = 'added';
  else if (s.renamed) f.status = 'renamed';
  else if (s.copied) f.status = 'copied';
  else if (f.oldMode && f.newMode && f.oldMode !== f.newMode && !f.hunks.length && !f.binary) f.status = 'mode';
  if (f.status === 'added') f.oldPath = null;
  if (f.status === 'deleted') f.newPath = null;
  f.path = f.newPath ?? f.oldPath ?? '';
  return f;
}

// openHunk starts the hunk at an "@@" line. Its index counts every such
// line of the section, read or not, as the host does.
function openHunk(s, line) {
  const index = s.count++;
  s.inHeader = false;
  const hh = parseHunkHeader(line);
  if (!hh || (s.f.combined ? hh.olds.length < 2 : hh.olds.length !== 1)) return null;
  const hunk = {
    index, header: line, section: hh.section,
    oldStart: hh.olds[0].start, oldCount: hh.olds[0].count, newStart: hh.new.start, newCount: hh.new.count,
    lines: [], partial: false,
  };
  s.f.hunks.push(hunk);
  return {
    hunk, cols: hh.olds.length,
    need: hh.olds.map((o) => o.count), needNew: hh.new.count,
    at: hh.olds.map((o) => o.start), atNew: hh.new.start,
  };
}

function open(run) {
  return run.needNew > 0 || run.need.some((n) => n > 0);
}

// hunkLine reads one line of an open hunk, or returns false when it is not
// one (or does not fit the counts the header gave). In a combined diff a
// line is in the result unless a column says '-'; it is in parent i when
// column i is ' ' (a result line) or '-' (a removed line).
function hunkLine(f, run, line) {
  let cols = line.slice(0, run.cols);
  // An empty line is an empty context line (git apply reads it so).
  if (line === '' && run.cols === 1) cols = ' ';
  if (cols.length !== run.cols || !/^[ +-]+$/.test(cols)) return false;
  const removed = cols.includes('-');
  const inNew = !removed;
  const inOld = [...cols].map((c) => (inNew ? c === ' ' : c === '-'));
  if ((inNew && run.needNew <= 0) || inOld.some((x, i) => x && run.need[i] <= 0)) return false;
  const kind = removed ? 'del' : cols.includes('+') ? 'add' : 'ctx';
  run.hunk.lines.push({ kind, old: inOld[0] ? run.at[0] : null, new: inNew ? run.atNew : null, text: line.slice(run.cols) });
  inOld.forEach((x, i) => { if (x) { run.at[i]++; run.need[i]--; } });
  if (inNew) { run.atNew++; run.needNew--; }
  if (kind === 'add') f.adds++;
  if (kind === 'del') f.dels++;
  return true;
}

// parseDiff reads git's diff text into files:
//   {oldPath, newPath, path, status, binary, combined, adds, dels, hunks,
//    oldMode, newMode, partial}
// status: modified | added | deleted | renamed | copied | mode (only the
// mode changed). oldPath is null for an added file, newPath for a deleted
// one; path is the one to show (newPath, else oldPath). hunks:
//   {index, header, section, oldStart, oldCount, newStart, newCount,
//    partial, lines: [{kind: add|del|ctx|note, old, new, text}]}
// old and new are line numbers, null on a side the line is not on; in a
// combined diff old follows the first parent. partial: the text ended (or
// broke off) before the lines the hunk header promised.
export function parseDiff(text) {
  const files = [];
  let s = null;
  let run = null;
  let last = null; // the last hunk, for a "\ No newline" after it
  const close = () => {
    if (run && open(run)) { run.hunk.partial = true; s.f.partial = true; }
    run = null;
  };
  const lines = typeof text === 'string' ? text.split('\n') : [];
  lines.pop(); // git ends every line; what follows the last "\n" is cut off
  for (const line of lines) {
    if (line.startsWith('diff ')) {
      close();
      if (s) files.push(finish(s));
      const known = /^diff --(?:git|cc|combined) ./.test(line);
      s = known ? newFile(line) : null; // a form git does not write: left out
      last = null;
      continue;
    }
    if (!s) continue;
    if (line.startsWith('@@')) {
      close();
      run = openHunk(s, line);
      last = run && run.hunk;
      continue;
    }
    if (line.startsWith('\\')) {
      if (last) last.lines.push({ kind: 'note', old: null, new: null, text: line.slice(1).trim() });
      continue;
    }
    if (run) {
      if (hunkLine(s.f, run, line)) {
        if (!open(run)) run = null;
        continue;
      }
      close(); // a line that is not the hunk's: it broke off here
      last = null;
    }
    if (s.inHeader) header(s, line);
  }
  close();
  if (s) files.push(finish(s));
  return files;
}

// ---------------------------------------------------------------------
// Changed words

// Words, runs of white space, and any other single character.
const TOKEN = /[\p{L}\p{N}_]+|\s+|[^]/gu;

function push(out, text, changed) {
  const prev = out[out.length - 1];
  if (prev && prev.changed === changed) prev.text += text;
  else out.push({ text, changed });
}

// absorb joins white space left unchanged between two changes into them,
// so "a b c" → "x y z" marks one run, not three.
function absorb(segs) {
  const out = [];
  for (let i = 0; i < segs.length; i++) {
    const g = segs[i];
    const between = !g.changed && /^\s+$/.test(g.text) && i > 0 && i < segs.length - 1;
    push(out, g.text, between || g.changed);
  }
  return out;
}

// wordDiff marks what changed between two lines: {a: [{text, changed}],
// b: [...]}, the segments of each side in order (an empty line has none).
// It is a longest common subsequence over tokens, within the bounds. A
// meter ({cells: 0}), if given, has the table cells it filled added to its
// cells, so a test can bound the work without a clock.
export function wordDiff(a, b, meter = null) {
  a = String(a ?? '');
  b = String(b ?? '');
  const whole = (t) => (t === '' ? [] : [{ text: t, changed: true }]);
  if (a.length > MAX_LINE || b.length > MAX_LINE) return { a: whole(a), b: whole(b) };
  const x = a.match(TOKEN) || [];
  const y = b.match(TOKEN) || [];
  if (x.length > MAX_TOKENS || y.length > MAX_TOKENS) return { a: whole(a), b: whole(b) };
  const w = y.length + 1;
  const L = new Uint16Array((x.length + 1) * w); // L[i,j]: LCS of x[i:], y[j:]
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      L[i * w + j] = x[i] === y[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
    if (meter) meter.cells += y.length; // the row just filled
  }
  const outA = [];
  const outB = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) { push(outA, x[i++], false); push(outB, y[j++], false); }
    else if (j >= y.length || (i < x.length && L[(i + 1) * w + j] >= L[i * w + j + 1])) push(outA, x[i++], true);
    else push(outB, y[j++], true);
  }
  return { a: absorb(outA), b: absorb(outB) };
}

// pairWords gives each deleted line paired with an added one (the i-th of
// a run of deletions with the i-th of the additions right after it) its
// segments. A side with nothing unchanged gets none: the whole line is new,
// and its colour already says so.
export function pairWords(lines) {
  const marks = new Map();
  for (let i = 0; i < lines.length;) {
    if (lines[i].kind !== 'del') { i++; continue; }
    let d = i;
    while (d < lines.length && lines[d].kind === 'del') d++;
    let a = d;
    while (a < lines.length && lines[a].kind === 'add') a++;
    for (let k = 0; k < Math.min(d - i, a - d); k++) {
      const wd = wordDiff(lines[i + k].text, lines[d + k].text);
      if (wd.a.some((g) => !g.changed && /\S/.test(g.text))) {
        marks.set(lines[i + k], wd.a);
        marks.set(lines[d + k], wd.b);
      }
    }
    i = Math.max(a, i + 1);
  }
  return marks;
}

// ---------------------------------------------------------------------
// The drawing as data

const STATUS = { modified: 'modified', added: 'added', deleted: 'deleted', renamed: 'renamed', copied: 'copied', mode: 'mode changed' };

// hunkLabel names a hunk's lines as people say them, from its header: the
// new side's, or the old side's for a hunk that only removes lines.
export function hunkLabel(hk) {
  const gone = hk.newCount === 0;
  const start = gone ? hk.oldStart : hk.newStart;
  const count = gone ? hk.oldCount : hk.newCount;
  const span = count <= 1 ? `Line ${start}` : `Lines ${start}–${start + count - 1}`;
  return gone ? `${span} (removed)` : span;
}

// countsLabel says the counts in words, for a screen reader.
export function countsLabel(f) {
  return `${f.adds} ${f.adds === 1 ? 'line' : 'lines'} added, ${f.dels} removed`;
}

// fileHead is what a file's header shows.
export function fileHead(f) {
  const moved = (f.status === 'renamed' || f.status === 'copied') && f.oldPath !== null && f.oldPath !== f.newPath;
  return {
    name: moved ? `${f.oldPath} → ${f.newPath}` : f.path,
    status: f.status === 'mode' ? `mode ${f.oldMode} → ${f.newMode}` : STATUS[f.status] || 'modified',
    counts: f.binary ? null : { plus: `+${f.adds}`, minus: `−${f.dels}`, label: countsLabel(f) },
  };
}

// emptyNote says why a file has no lines to show.
export function emptyNote(f) {
  if (f.binary) return 'Binary file, not shown.';
  if (f.status === 'mode') return `Only the file mode changed (${f.oldMode} → ${f.newMode}).`;
  if (f.status === 'renamed' || f.status === 'copied') return `${STATUS[f.status][0].toUpperCase()}${STATUS[f.status].slice(1)} without changes.`;
  if (f.status === 'added') return 'Empty file.';
  return 'No lines changed.';
}

// action is the hunk button's model, from opts.hunkAction: an object, or a
// function (hunk, file) that returns one (or null for none). The host never
// stages a combined diff's hunks (gate/hunks.go reads only "@@ -a +b @@"),
// so there the button says so instead.
function action(opts, f, hk, of, where) {
  const a = typeof opts.hunkAction === 'function' ? opts.hunkAction(hk, f) : opts.hunkAction;
  if (!a || !a.label) return null;
  let { disabled = false, why = '' } = a;
  if (f.combined && !disabled) [disabled, why] = [true, 'A file with a merge conflict is staged whole, not by hunks.'];
  return {
    label: a.label, disabled: Boolean(disabled), why: disabled ? String(why || '') : '',
    ariaLabel: `${a.label} ${hk.index + 1} of ${of} (${where.toLowerCase()})`,
    run: disabled ? () => a.onblocked && a.onblocked(why, hk.index) : () => a.onclick && a.onclick(hk.index),
  };
}

const SIGN = { add: '+', del: '−', ctx: '', note: '' };
const SPOKEN = { add: 'added: ', del: 'removed: ', ctx: '', note: '' };

// rows is a file's drawing as data, in order: a {type: 'hunk', index,
// label, section, action} bar before each hunk's lines, then {type:
// 'line', kind, old, new, sign, spoken, parts: [{text, changed}]}.
export function rows(f, opts = {}) {
  const out = [];
  const of = f.hunks.reduce((n, hk) => Math.max(n, hk.index + 1), 0);
  for (const hk of f.hunks) {
    const label = hunkLabel(hk);
    out.push({ type: 'hunk', index: hk.index, label, section: hk.section, partial: hk.partial, action: action(opts, f, hk, of, label) });
    const marks = pairWords(hk.lines);
    for (const l of hk.lines) {
      const parts = marks.get(l) || (l.text === '' ? [] : [{ text: l.text, changed: false }]);
      out.push({ type: 'line', kind: l.kind, old: l.old, new: l.new, sign: SIGN[l.kind], spoken: SPOKEN[l.kind], parts });
    }
  }
  return out;
}

// ---------------------------------------------------------------------
// Elements

let ids = 0;

function hunkEl(r) {
  const kids = [h('span', { class: 'diff-range' }, r.label)];
  if (r.section) kids.push(h('code', { class: 'diff-section' }, r.section));
  const a = r.action;
  if (a) {
    const why = a.disabled && a.why ? h('span', { class: 'sr', id: `diff-why-${++ids}` }, a.why) : null;
    kids.push(h('button', {
      type: 'button', class: a.disabled ? 'diff-act off' : 'diff-act', 'aria-label': a.ariaLabel,
      'aria-disabled': a.disabled ? 'true' : null, title: why ? a.why : null,
      'aria-describedby': why ? why.getAttribute('id') : null, onclick: a.run,
    }, a.label), why);
  }
  return h('div', { class: 'diff-hunk' }, kids);
}

function lineEl(r) {
  // "noeol", not "note": the page's .note is a call-out box.
  if (r.kind === 'note') return h('div', { class: 'diff-line noeol' }, h('span', { class: 'diff-code' }, r.parts.map((p) => p.text)));
  return h('div', { class: `diff-line ${r.kind}` },
    h('span', { class: 'diff-num', 'aria-hidden': 'true' }, r.old ?? ''),
    h('span', { class: 'diff-num', 'aria-hidden': 'true' }, r.new ?? ''),
    h('span', { class: 'diff-sign', 'aria-hidden': 'true' }, r.sign),
    h('span', { class: 'diff-code' }, r.spoken ? h('span', { class: 'sr' }, r.spoken) : null,
      r.parts.map((p) => (p.changed ? h('mark', {}, p.text) : p.text))));
}

function rowEl(r) {
  return r.type === 'hunk' ? hunkEl(r) : lineEl(r);
}

// numWidth is the width class of a file's number columns: the digits of
// its largest line number (1 to 7; more is unlikely and just wider).
export function numWidth(f) {
  let max = 1;
  for (const hk of f.hunks) for (const l of hk.lines) max = Math.max(max, l.old ?? 0, l.new ?? 0);
  return `diff-w${Math.min(7, String(max).length)}`;
}

// collapse splits rows after `limit` lines: the hunk bars before a shown
// line are shown with it.
export function collapse(all, limit) {
  let shown = 0;
  for (let i = 0; i < all.length; i++) {
    if (all[i].type !== 'line') continue;
    if (shown === limit) return { head: all.slice(0, i), rest: all.slice(i), total: all.filter((r) => r.type === 'line').length };
    shown++;
  }
  return { head: all, rest: [], total: shown };
}

const HEADINGS = ['h2', 'h3', 'h4', 'h5', 'h6'];

// renderFile draws one file: its header (name, status, counts; the name in
// an opts.heading element, h3 unless the screen's outline wants another
// level), then each hunk's bar and lines. Past opts.collapseAt lines (COLLAPSE_AT), the rest
// waits behind a "Show all N lines" button that draws it in place.
export function renderFile(f, opts = {}) {
  const head = fileHead(f);
  const top = h('div', { class: 'diff-head' },
    h(HEADINGS.includes(opts.heading) ? opts.heading : 'h3', { class: 'diff-name' }, head.name),
    h('span', { class: 'diff-status' }, head.status),
    head.counts && h('span', { class: 'diff-counts', role: 'img', 'aria-label': head.counts.label },
      h('span', { class: 'diff-plus' }, head.counts.plus), ' ', h('span', { class: 'diff-minus' }, head.counts.minus)));
  const body = h('div', { class: 'diff-body' });
  const all = f.binary ? [] : rows(f, opts);
  if (!all.length) body.append(h('p', { class: 'diff-empty' }, emptyNote(f)));
  const limit = Number.isInteger(opts.collapseAt) && opts.collapseAt > 0 ? opts.collapseAt : COLLAPSE_AT;
  const { head: shown, rest, total } = collapse(all, limit);
  body.append(...shown.map(rowEl));
  if (rest.length) {
    const more = h('button', {
      type: 'button', class: 'diff-more',
      onclick: () => {
        const els = rest.map(rowEl);
        more.remove();
        body.append(...els);
        els[0].setAttribute('tabindex', '-1'); // where reading goes on
        if (els[0].focus) els[0].focus();
      },
    }, `Show all ${total} lines`);
    body.append(more);
  }
  return h('section', { class: `diff-file ${numWidth(f)}` }, top, body);
}

// renderDiff draws every file in a <div class="diff">; opts.wrap === false
// keeps lines whole with sideways scrolling (class nowrap, which a toggle
// may flip on the container in place).
export function renderDiff(files, opts = {}) {
  return h('div', { class: opts.wrap === false ? 'diff nowrap' : 'diff' }, (files || []).map((f) => renderFile(f, opts)));
}
