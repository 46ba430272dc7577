// A diff made readable on a phone: git's output (as git.diff and git.show
// send it) read into files and hunks with line numbers from the hunk
// headers, changed words marked, and drawn without git's header lines.
//
// Reading never decides anything: the host already chose what a device may
// see, and hunks are staged by their position, which the host counts the
// same way (every line starting "@@" in a file's section starts a hunk,
// gate/hunks.go splitHunks). Nothing here throws on any input.
import { h } from './dom.js';

// unquote reads a name as git writes it: bare, or in double quotes with C
// escapes (\t, \", \\, octal bytes of UTF-8).
export function unquote(s) {
  if (!s.startsWith('"') || s.length < 2 || !s.endsWith('"')) return s;
  const bytes = [];
  const esc = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  const body = s.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\') {
      for (const b of new TextEncoder().encode(c)) bytes.push(b);
      continue;
    }
    const n = body[i + 1];
    if (/[0-7]/.test(n || '') && /^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8) & 255);
      i += 3;
    } else if (n in esc) {
      bytes.push(esc[n]);
      i++;
    } else {
      bytes.push(92);
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

// gitLineNames reads "diff --git a/X b/Y" when no other line names the
// file (a mode change, a binary file): quoted names are read as such; a
// bare pair is split where both halves are the same name, the one reading
// git itself relies on.
function gitLineNames(rest) {
  if (rest.startsWith('"')) {
    const m = /^("(?:[^"\\]|\\.)*")\s+(.*)$/.exec(rest);
    if (m) return [strip(unquote(m[1]), 'a/'), strip(unquote(m[2]), 'b/')];
  }
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === ' ') {
    const a = rest.slice(0, half);
    const b = rest.slice(half + 1);
    if (a.startsWith('a/') && b.startsWith('b/') && a.slice(2) === b.slice(2)) return [a.slice(2), b.slice(2)];
  }
  return [null, null];
}

function strip(name, prefix) {
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

function range(s) {
  const m = /^[-+](\d+)(?:,(\d+))?$/.exec(s);
  return m ? { start: Number(m[1]), count: m[2] === undefined ? 1 : Number(m[2]) } : null;
}

// parseHunkHeader reads "@@ -a,b +c,d @@ section" and its combined form
// "@@@ -a,b -c,d +e,f @@@" (one - range per parent).
function parseHunkHeader(line) {
  const m = /^(@{2,}) (.*?) \1(?: (.*))?$/.exec(line);
  if (!m) return null;
  const cols = m[1].length - 1;
  const parts = m[2].split(' ');
  const olds = parts.filter((p) => p.startsWith('-')).map(range);
  const nw = range(parts.find((p) => p.startsWith('+')) || '');
  if (!nw || !olds.length || olds.some((o) => !o)) return null;
  return { cols, old: olds[0], new: nw, section: m[3] || '' };
}

function newFile(line) {
  const f = { oldPath: null, newPath: null, path: '', status: 'modified', binary: false, combined: false, adds: 0, dels: 0, hunks: [], mode: false };
  if (line.startsWith('diff --git ')) {
    [f.oldPath, f.newPath] = gitLineNames(line.slice('diff --git '.length));
  } else {
    const name = line.replace(/^diff --(cc|combined) /, '');
    f.combined = name !== line;
    f.oldPath = f.newPath = unquote(name);
  }
  return f;
}

function finish(f) {
  if (f.status === 'modified' && f.mode && !f.hunks.length && !f.binary) f.status = 'mode';
  f.path = (f.status === 'deleted' ? f.oldPath : f.newPath || f.oldPath) || '';
  delete f.mode;
  return f;
}

// parseDiff reads git's diff text into files: {oldPath, newPath, path,
// status, binary, combined, adds, dels, hunks: [{index, header, section,
// oldStart, newStart, lines: [{kind, old, new, text}]}]}. kind is add, del,
// ctx or note ("\ No newline at end of file"); old and new are line numbers
// (null on the side a line is not on; in a combined diff, old follows the
// first parent).
export function parseDiff(text) {
  const files = [];
  let f = null;
  let hunk = null;
  let oldNo = 0;
  let newNo = 0;
  for (const line of String(text || '').split('\n')) {
    if (line.startsWith('diff ')) {
      if (f) finish(f);
      f = newFile(line);
      files.push(f);
      hunk = null;
      continue;
    }
    if (!f) continue;
    if (line.startsWith('@@')) {
      const hh = parseHunkHeader(line);
      if (!hh) { hunk = null; continue; }
      hunk = { index: f.hunks.length, header: line, section: hh.section, cols: hh.cols,
        oldStart: hh.old.start, oldCount: hh.old.count, newStart: hh.new.start, newCount: hh.new.count, lines: [] };
      f.hunks.push(hunk);
      oldNo = hh.old.start;
      newNo = hh.new.start;
      continue;
    }
    if (hunk) {
      if (line.startsWith('\\')) {
        hunk.lines.push({ kind: 'note', old: null, new: null, text: line.slice(1).trim() });
        continue;
      }
      const prefix = line.slice(0, hunk.cols);
      if (prefix.length === hunk.cols && /^[ +-]+$/.test(prefix)) {
        const inNew = !prefix.includes('-');
        const inOld = prefix[0] !== '+';
        const kind = !inNew ? 'del' : prefix.includes('+') ? 'add' : 'ctx';
        hunk.lines.push({ kind, old: inOld ? oldNo : null, new: inNew ? newNo : null, text: line.slice(hunk.cols) });
        if (inOld) oldNo++;
        if (inNew) newNo++;
        if (kind === 'add') f.adds++;
        if (kind === 'del') f.dels++;
        continue;
      }
      if (line === '') continue; // the end of the text
      hunk = null; // something else: the hunk ended (a cut-short diff)
    }
    header(f, line);
  }
  if (f) finish(f);
  for (const file of files) for (const hk of file.hunks) delete hk.cols;
  return files;
}

// header reads one of a file's header lines.
function header(f, line) {
  const after = (p) => (line.startsWith(p) ? line.slice(p.length) : null);
  let v;
  if (line.startsWith('new file mode')) f.status = 'added';
  else if (line.startsWith('deleted file mode')) f.status = 'deleted';
  else if (line.startsWith('old mode') || line.startsWith('new mode')) f.mode = true;
  else if ((v = after('rename from ')) !== null) { f.oldPath = unquote(v); f.status = 'renamed'; }
  else if ((v = after('rename to ')) !== null) { f.newPath = unquote(v); f.status = 'renamed'; }
  else if ((v = after('copy from ')) !== null) { f.oldPath = unquote(v); f.status = 'copied'; }
  else if ((v = after('copy to ')) !== null) { f.newPath = unquote(v); f.status = 'copied'; }
  else if (line.startsWith('Binary files ') || line.startsWith('GIT binary patch')) f.binary = true;
  else if ((v = after('--- ')) !== null) {
    const name = unquote(v.replace(/\t$/, ''));
    if (name === '/dev/null') f.status = 'added';
    else if (!f.combined) f.oldPath = strip(name, 'a/');
  } else if ((v = after('+++ ')) !== null) {
    const name = unquote(v.replace(/\t$/, ''));
    if (name === '/dev/null') f.status = 'deleted';
    else f.newPath = strip(name, 'b/');
  }
}

// Words, runs of space, and single other characters.
const TOKEN = /[\p{L}\p{N}_]+|\s+|./gsu;
const MAX_TOKENS = 300;
const MAX_LINE = 2000;

// wordDiff marks what changed between two lines, word by word: {a: [{text,
// changed}], b: [...]}. Over MAX_TOKENS words (or MAX_LINE characters) a
// side, the whole line is one change: the comparison is quadratic, and a
// line is the repository's to make long.
export function wordDiff(a, b) {
  const whole = () => ({ a: [{ text: a, changed: true }], b: [{ text: b, changed: true }] });
  if (a.length > MAX_LINE || b.length > MAX_LINE) return whole();
  const x = a.match(TOKEN) || [];
  const y = b.match(TOKEN) || [];
  if (x.length > MAX_TOKENS || y.length > MAX_TOKENS) return whole();
  const n = x.length;
  const m = y.length;
  const w = m + 1;
  const L = new Uint16Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i * w + j] = x[i] === y[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  const outA = [];
  const outB = [];
  const push = (out, text, changed) => {
    const last = out[out.length - 1];
    if (last && last.changed === changed) last.text += text;
    else out.push({ text, changed });
  };
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { push(outA, x[i++], false); push(outB, y[j++], false); }
    else if (L[(i + 1) * w + j] >= L[i * w + j + 1]) push(outA, x[i++], true);
    else push(outB, y[j++], true);
  }
  while (i < n) push(outA, x[i++], true);
  while (j < m) push(outB, y[j++], true);
  return { a: outA, b: outB };
}

// pairs marks each deleted line paired with an added one (the i-th of a
// run of deletions with the i-th of the additions right after it) with the
// words that changed between them.
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
      marks.set(lines[i + k], wd.a);
      marks.set(lines[d + k], wd.b);
    }
    i = a;
  }
  return marks;
}

const STATUS = { added: 'new file', deleted: 'deleted', renamed: 'renamed', copied: 'copied', mode: 'mode changed', modified: '' };

// lines of a hunk as people say them ("Lines 40–52"), on the new side, or
// the old for a hunk that only removes.
export function hunkLines(hk) {
  const start = hk.newCount ? hk.newStart : hk.oldStart;
  const count = hk.newCount || hk.oldCount;
  return count <= 1 ? `Line ${start}` : `Lines ${start}–${start + count - 1}`;
}

export function counts(f) {
  return h('span', { class: 'counts' }, h('span', { class: 'sr' }, `${f.adds} lines added, ${f.dels} removed`),
    h('span', { class: 'plus', 'aria-hidden': 'true' }, `+${f.adds}`), ' ', h('span', { class: 'minus', 'aria-hidden': 'true' }, `−${f.dels}`));
}

function lineEl(l, marks) {
  if (l.kind === 'note') return h('div', { class: 'dl note' }, h('span', { class: 'ln' }), h('span', { class: 'ln' }), h('span', { class: 'dcode muted' }, l.text));
  const segs = marks.get(l);
  const text = segs ? segs.map((s) => (s.changed ? h('mark', {}, s.text) : s.text)) : l.text;
  return h('div', { class: `dl ${l.kind}` },
    h('span', { class: 'ln', 'aria-hidden': 'true' }, l.old ?? ''),
    h('span', { class: 'ln', 'aria-hidden': 'true' }, l.new ?? ''),
    h('span', { class: 'dcode' }, l.kind === 'add' ? h('span', { class: 'sr' }, 'added: ') : l.kind === 'del' ? h('span', { class: 'sr' }, 'removed: ') : null, text));
}

function hunkBar(f, hk, opts) {
  const a = opts.hunkAction;
  const where = hunkLines(hk);
  let act = null;
  if (a) {
    const label = `${a.label} ${hk.index + 1} of ${f.hunks.length} (${where.toLowerCase()})`;
    act = a.disabled
      ? h('button', { type: 'button', class: 'off', 'aria-disabled': 'true', title: a.why, 'aria-label': `${label} (not available)`, onclick: () => a.onNotAllowed && a.onNotAllowed(a.why) }, a.label)
      : h('button', { type: 'button', 'aria-label': label, onclick: () => a.onclick(hk.index) }, a.label);
  }
  return h('div', { class: 'hunkbar' }, h('span', { class: 'where' }, where), hk.section ? h('code', { class: 'fn' }, hk.section) : null, act);
}

// renderFile draws one file: a header with its name, what happened and
// the counts; then its hunks, each with a bar naming its lines (and the
// stage or unstage button of opts.hunkAction), then the lines with both
// numbers and the changed words marked. Past opts.collapseAt lines (300),
// the rest waits behind "Show all N lines".
export function renderFile(f, opts = {}) {
  const collapseAt = opts.collapseAt || 300;
  const total = f.hunks.reduce((n, hk) => n + hk.lines.length, 0);
  const name = f.status === 'renamed' || f.status === 'copied' ? `${f.oldPath} → ${f.newPath}` : f.path;
  const body = h('div', { class: 'dbody' });
  const draw = (limit) => {
    body.replaceChildren();
    let shown = 0;
    for (const hk of f.hunks) {
      if (shown >= limit) break;
      body.append(hunkBar(f, hk, opts));
      const marks = pairWords(hk.lines);
      for (const l of hk.lines) {
        if (shown >= limit) break;
        body.append(lineEl(l, marks));
        shown++;
      }
    }
    if (shown < total) {
      body.append(h('button', { type: 'button', class: 'more', onclick: () => draw(Infinity) }, `Show all ${total} lines`));
    }
  };
  if (f.binary) body.append(h('p', { class: 'muted' }, 'Binary file, not shown.'));
  else if (!f.hunks.length) body.append(h('p', { class: 'muted' }, f.status === 'mode' ? 'Only the file mode changed.' : 'No lines changed.'));
  else draw(collapseAt);
  return h('section', { class: 'dfile' },
    h('h3', { class: 'dhead' }, h('span', { class: 'dname' }, name), ' ',
      STATUS[f.status] ? h('span', { class: 'badge' }, STATUS[f.status]) : null, ' ', counts(f)),
    body);
}

// renderDiff draws every file; wrap false keeps lines whole with sideways
// scrolling (the .nowrap class, which a toggle can change in place).
export function renderDiff(files, opts = {}) {
  return h('div', { class: opts.wrap === false ? 'diff nowrap' : 'diff' }, files.map((f) => renderFile(f, opts)));
}
