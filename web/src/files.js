// Files: folders (paged, with thumbnails of images), a file's text with
// line numbers (opened at the top, or at a line from a search), images,
// the editor, and search by name or content.
import { h } from './dom.js';
import { state, run, quiet, note, say, clearNotes, action, allowed, setTitle, show, go, pages, lock, fullAccess, SECRET_WHY, isImage, pref, setPref, place, tabs } from './ui.js';
import { at } from './routes.js';
import { icon } from './icons.js';
import { historyOf } from './history.js';
import { blameView } from './blame.js';

const join = (dir, name) => (dir ? `${dir}/${name}` : name);

export async function files(p, dir, st = {}) {
  place(at.files(p, dir));
  state.onChange = null;
  setTitle(dir ? `${p.name}/${dir}` : p.name, true);
  const list = h('ul', { class: 'list', 'aria-label': dir ? `Files in ${dir}` : 'Files' });
  const crumbs = dir ? h('p', { class: 'crumbs muted' }, h('code', {}, `${dir}/`)) : null;
  show(dir ? null : tabs(p, 'files'), crumbs, list);
  const thumbs = thumbLoader(p);
  await pages(list, st, async (offset) => {
    const res = await run('files.list', { target: p.id, path: dir || undefined, offset: offset || undefined }).catch(() => null);
    return res && { items: res.entries, next: res.next };
  }, (e) => {
    const path = join(dir, e.name);
    const secret = e.secret && !fullAccess();
    const open = e.kind === 'dir' ? () => go((s) => files(p, path, s)) : () => go((s) => readFile(p, path, 0, s));
    const thumb = e.kind !== 'dir' && !secret && isImage(e.name) ? thumbs(path) : null;
    return h('li', {}, h('button', { type: 'button', class: 'item', onclick: open },
      thumb || h('span', { class: 'kind', 'aria-hidden': 'true' }, icon(e.kind === 'dir' ? 'folder' : 'file')),
      h('span', { class: 'name' }, e.kind === 'dir' ? `${e.name}/` : e.name),
      secret ? lock() : null),
    secret ? h('span', { class: 'sr' }, SECRET_WHY) : null);
  }, 'This folder is empty.');
}

// thumbLoader gives an img that fills in with files.image's thumbnail when
// it scrolls into view; one thumbnail is asked for at a time, as the host
// decodes one at a time.
function thumbLoader(p) {
  const queue = [];
  let busy = false;
  const next = async () => {
    if (busy || !queue.length) return;
    busy = true;
    const { img, path } = queue.shift();
    const res = await quiet('files.image', { target: p.id, path, variant: 'thumb' });
    if (res && res.data) img.src = `data:${res.mime};base64,${res.data}`;
    else img.classList.add('none');
    busy = false;
    next();
  };
  const seen = 'IntersectionObserver' in window ? new IntersectionObserver((ents) => {
    for (const e of ents) {
      if (!e.isIntersecting) continue;
      seen.unobserve(e.target);
      queue.push({ img: e.target, path: e.target.dataset.path });
      next();
    }
  }, { rootMargin: '200px' }) : null;
  return (path) => {
    const img = h('img', { class: 'thumb', alt: '', width: 40, height: 40, 'data-path': path });
    if (seen) seen.observe(img);
    else { queue.push({ img, path }); next(); }
    return img;
  };
}

// readFile shows a file's text with line numbers, from its top, or
// scrolled to line (a search result) with that line marked.
export async function readFile(p, path, line = 0) {
  place(at.file(p, path, line));
  state.onChange = null;
  setTitle(path, true);
  if (isImage(path)) return imageView(p, path);
  const res = await run('files.read', { target: p.id, path }).catch(() => null);
  if (!res) return show(h('p', { class: 'muted' }, 'This file is not shown.'));
  if (res.binary) return show(h('p', { class: 'muted' }, `A binary file of ${res.size} bytes.`));
  const code = h('div', { class: 'source', role: 'region', 'aria-label': `Contents of ${path}` });
  let n = 0;
  const append = (text) => {
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    for (const l of lines) {
      n++;
      code.append(h('div', { class: n === line ? 'line hit' : 'line', id: `L${n}` }, h('span', { class: 'ln', 'aria-hidden': 'true' }, String(n)), h('span', { class: 'text' }, l)));
    }
  };
  append(res.text);
  let next = res.next;
  const more = h('button', { type: 'button', onclick: async () => {
    const r = await run('files.read', { target: p.id, path, offset: next }).catch(() => null);
    if (!r) return;
    append(r.text);
    next = r.next;
    if (!next) more.remove();
  } }, 'Load more of this file');
  const edit = allowed('files.write');
  show(h('div', { class: 'row' },
    edit.ok ? h('button', { type: 'button', onclick: () => (next ? say('Load the whole file before editing it.') : editFile(p, path, res, code)) }, 'Edit')
      : action('Edit', 'files.write', () => {}),
    h('button', { type: 'button', onclick: () => go(() => historyOf(p, path)) }, 'History of this file'),
    p.git ? h('button', { type: 'button', onclick: () => go(() => blameView(p, path)) }, 'Blame') : null),
  code, next ? more : null);
  const hit = line && document.getElementById(`L${line}`);
  if (hit) requestAnimationFrame(() => hit.scrollIntoView({ block: 'center' }));
}

// imageView shows an image whole: its chunks are joined as base64 (each
// chunk is a multiple of three bytes, so the text joins cleanly), up to
// the size the host announces.
async function imageView(p, path) {
  const max = (state.hello.limits && state.hello.limits.maxImageBytes) || 8 << 20;
  let offset = 0;
  let data = '';
  let mime = '';
  for (;;) {
    const res = await run('files.image', { target: p.id, path, variant: 'full', offset: offset || undefined }).catch(() => null);
    if (!res) return show(h('p', { class: 'muted' }, 'This image is not shown.'));
    if (res.total > max) return show(h('p', { class: 'muted' }, 'This image is too large to show on a phone.'));
    mime = res.mime;
    data += res.data;
    offset = res.offset + Math.floor((res.data.length * 3) / 4) - (res.data.endsWith('==') ? 2 : res.data.endsWith('=') ? 1 : 0);
    if (res.done) break;
  }
  show(h('figure', { class: 'image' }, h('img', { src: `data:${mime};base64,${data}`, alt: path }),
    h('figcaption', { class: 'muted' }, path)),
  h('button', { type: 'button', onclick: () => go(() => historyOf(p, path)) }, 'History of this file'));
}

function editFile(p, path, res) {
  const area = h('textarea', { id: 'editor', class: 'editor', spellcheck: 'false' });
  area.value = res.text;
  show(h('label', { for: 'editor' }, `Editing ${path}`), area,
    h('div', { class: 'row' }, h('button', { type: 'button', class: 'primary', onclick: async () => {
      clearNotes();
      const out = await run('files.write', { target: p.id, path, text: area.value, baseHash: res.hash }).catch(() => null);
      if (out) { await readFile(p, path); note('Saved.'); }
    } }, 'Save'), h('button', { type: 'button', onclick: () => readFile(p, path) }, 'Cancel')));
}

// search finds files by name or lines by content. Which one is a mode the
// person picks (two buttons, the chosen one pressed); picking one searches
// again when there is a query. The query, mode, options and results stay
// on the screen's state, so back from a result returns to them.
export async function search(p, st = {}) {
  place(at.search(p));
  state.onChange = null;
  setTitle(p.name, true);
  st.mode = st.mode || pref('searchMode', 'names');
  const opt = (id, label, key) => {
    st[key] = Boolean(st[key] ?? pref(key, false));
    const box = h('input', { type: 'checkbox', id, checked: st[key] });
    box.addEventListener('change', () => { st[key] = box.checked; setPref(key, box.checked); });
    return h('label', { for: id, class: 'inline' }, box, ` ${label}`);
  };
  // What is being typed survives the screen being drawn again (one
  // overtaken by the person's own back and tab, see ui.js paint).
  const q = h('input', { type: 'search', id: 'query', name: 'query', autocomplete: 'off', enterkeyhint: 'search', value: st.query || '',
    oninput: () => { st.query = q.value; } });
  const results = h('div', { 'aria-live': 'polite' });
  const names = async (keep) => {
    st.query = q.value;
    st.kind = 'names';
    if (!keep) st.pages = 1;
    const list = h('ul', { class: 'list', 'aria-label': 'Files found' });
    results.replaceChildren(list);
    const query = q.value;
    await pages(list, st, async (offset) => {
      const res = await run('files.search', { target: p.id, query, includeIgnored: Boolean(st.ignored) || undefined, offset: offset || undefined }, 25_000).catch(() => null);
      return res && { items: res.paths, next: res.next };
    }, (path) => {
      const folder = path.endsWith('/');
      const clean = folder ? path.slice(0, -1) : path;
      return h('li', {}, h('button', { type: 'button', class: 'item', onclick: () => go((s) => (folder ? files(p, clean, s) : readFile(p, clean))) },
        h('span', { class: 'kind', 'aria-hidden': 'true' }, icon(folder ? 'folder' : 'file')),
        h('span', { class: 'name' }, marked(path, found(path, query, {})))));
    }, 'No names match.');
  };
  const grep = async (keep) => {
    st.query = q.value;
    st.kind = 'grep';
    if (!keep) st.pages = 1;
    const list = h('ul', { class: 'list', 'aria-label': 'Lines found' });
    results.replaceChildren(list);
    const query = q.value;
    const how = { matchCase: Boolean(st.matchCase), wholeWord: Boolean(st.wholeWord), regex: Boolean(st.regex) };
    await pages(list, st, async (offset) => {
      const res = await run('files.grep', { target: p.id, query, matchCase: how.matchCase || undefined,
        wholeWord: how.wholeWord || undefined, regex: how.regex || undefined,
        includeIgnored: Boolean(st.ignored) || undefined, offset: offset || undefined }, 25_000).catch(() => null);
      if (res && res.skipped) note(`${res.skipped} very large files were not searched.`);
      return res && { items: res.matches, next: res.next };
    }, (m) => {
      const text = m.text.slice(0, MAX_SHOWN);
      const at0 = found(text, query, how);
      const from = at0 && at0[0] > 40 ? at0[0] - 20 : text.length - text.trimStart().length;
      const shown = text.slice(from);
      const hit = at0 && [at0[0] - from, at0[1] - from];
      return h('li', {}, h('button', { type: 'button', class: 'item hit-row', onclick: () => go(() => readFile(p, m.path, m.line)) },
        h('span', { class: 'where' }, `${m.path}:${m.line}`),
        h('code', { class: 'match' }, from > 0 && at0 && at0[0] > 40 ? '…' : '', marked(shown, hit))));
    }, 'Nothing matches.');
  };
  const searchNow = () => { clearNotes(); return st.mode === 'grep' ? grep() : names(); };
  const grepOnly = h('div', { class: 'row options', hidden: st.mode !== 'grep' },
    opt('matchcase', 'Match case', 'matchCase'), opt('wholeword', 'Whole word', 'wholeWord'), opt('regex', 'Regular expression', 'regex'));
  const modes = [['names', 'File names'], ['grep', 'Contents']].map(([mode, label]) => h('button', {
    type: 'button', 'aria-pressed': String(st.mode === mode), onclick: () => {
      st.mode = mode;
      setPref('searchMode', mode);
      for (const b of modes) b.setAttribute('aria-pressed', String(b === modes[mode === 'names' ? 0 : 1]));
      grepOnly.hidden = mode !== 'grep';
      q.placeholder = mode === 'grep' ? 'text in the files' : 'part of a file name';
      if (q.value.trim()) return searchNow();
      return undefined;
    } }, label));
  q.placeholder = st.mode === 'grep' ? 'text in the files' : 'part of a file name';
  const form = h('form', { role: 'search', onsubmit: (e) => { e.preventDefault(); searchNow(); } },
    h('div', { class: 'segmented', role: 'group', 'aria-label': 'Search in' }, modes),
    h('label', { for: 'query' }, 'Search'),
    h('div', { class: 'row query' }, q, h('button', { type: 'submit', class: 'primary' }, 'Find')),
    h('div', { class: 'row options' }, opt('ignored', 'Include ignored files', 'ignored')),
    grepOnly);
  show(tabs(p, 'search'), form, results);
  if (st.kind === 'names') await names(true);
  else if (st.kind === 'grep') await grep(true);
}

// MAX_SHOWN bounds how much of a found line is drawn and looked through for
// the match to mark (a line is the repository's, of any length).
const MAX_SHOWN = 400;

// found gives [start, end] of the first match of query in text as the host
// matched it (how: matchCase, wholeWord, regex), or null when the page
// cannot tell (a regular expression JavaScript reads differently from git):
// the line is then drawn unmarked. Only the person's own query is compiled.
function found(text, query, how) {
  if (!query) return null;
  let re;
  try {
    const source = how.regex ? query : query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    re = new RegExp(how.wholeWord ? `(?<![\\w])(?:${source})(?![\\w])` : source, how.matchCase ? '' : 'i');
  } catch {
    return null;
  }
  const m = re.exec(text);
  return m && m[0] ? [m.index, m.index + m[0].length] : null;
}

// marked is text with the part at hit in a <mark>, split as text: nothing
// of the line is ever read as HTML.
function marked(text, hit) {
  if (!hit) return text;
  return [text.slice(0, hit[0]), h('mark', {}, text.slice(hit[0], hit[1])), text.slice(hit[1])];
}
