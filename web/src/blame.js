// Blame and the whole diff. A file's blame (git.blame, a page of lines at
// a time as it scrolls): its lines grouped by the commit that last changed
// them, each group headed by the commit's short id, author, age and
// subject, a tap away from that commit's screen (history.js). The whole
// working-tree diff (git.diffPage): every changed file in git's order,
// staged or not, each with its name and +/- counts and collapsible, a page
// of files loaded as the person scrolls, so a change of hundreds of files
// never arrives whole.
import { h } from './dom.js';
import { parseDiff, renderFile, fileHead } from './diff.js';
import { run, setTitle, show, go, pages, ago, pref, place, lock } from './ui.js';
import { at } from './routes.js';
import { commitView } from './history.js';

const BLAME_PAGE = 500;

// when is a commit's author time as an ISO date, for ago.
const when = (c) => new Date((c.time || 0) * 1000).toISOString();

export async function blameView(p, path, st = {}) {
  place(at.blame(p, path));
  setTitle(`Blame of ${path}`, true);
  const code = h('ol', { class: 'blame', 'aria-label': `Lines of ${path} and the commits that last changed them` });
  show(h('h2', {}, 'Who changed each line of ', h('code', {}, path)),
    h('p', { class: 'muted small' }, 'At the current commit (HEAD). Tap a commit to open it.'), code);
  const commits = {};
  let group = null;
  await pages(code, st, async (offset) => {
    const res = await run('git.blame', { target: p.id, path, start: offset || 1, count: BLAME_PAGE }, 35_000).catch(() => null);
    if (!res) return null;
    Object.assign(commits, res.commits);
    return { items: res.lines, next: res.next };
  }, (l) => {
    if (group && group.oid === l.oid) {
      group.body.append(lineOf(l));
      return null;
    }
    group = { oid: l.oid, body: h('div', { class: 'blame-lines' }) };
    group.body.append(lineOf(l));
    return h('li', { class: 'blame-group' }, commitHead(p, path, l, commits[l.oid] || {}), group.body);
  }, 'This file is empty.');
}

// commitHead heads a run of lines from one commit: a button to the commit,
// saying the file's name then when the commit knew it by another.
function commitHead(p, path, l, c) {
  const moved = l.origPath && l.origPath !== path ? l.origPath : '';
  return h('button', { type: 'button', class: 'blame-commit', onclick: () => go(() => commitView(p, l.oid)) },
  h('span', { class: 'sr' }, 'Commit '), h('code', {}, l.oid.slice(0, 8)), ' ', h('span', { class: 'blame-who' }, c.author || ''),
  ' · ', h('time', { datetime: when(c) }, ago(when(c))),
  h('span', { class: 'blame-subject' }, c.subject || '(no message)'),
  moved ? h('span', { class: 'muted small blame-from' }, `as ${moved}, line ${l.origLine}`) : null);
}

function lineOf(l) {
  return h('div', { class: 'blame-line', id: `L${l.line}` },
    h('span', { class: 'ln', 'aria-hidden': 'true' }, String(l.line)),
    h('span', { class: 'text' }, l.text, l.cut ? h('span', { class: 'muted' }, ' …') : null));
}

// diffAll is the whole working-tree diff: the changes not staged, or the
// staged ones, a page of files at a time.
export async function diffAll(p, st = {}) {
  place(at.diffAll(p));
  const staged = Boolean(st.staged);
  setTitle(staged ? 'All staged changes' : 'All changes', true);
  const list = h('ul', { class: 'list diff-all', 'aria-label': staged ? 'Staged files and their changes' : 'Changed files and their changes' });
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' });
  const notes = h('div');
  const side = (label, value) => h('button', { type: 'button', 'aria-pressed': String(staged === value), onclick: () => {
    if (staged === value) return;
    st.staged = value;
    st.pages = 0;
    st.open = {};
    diffAll(p, st);
  } }, label);
  const wrap = pref('wrap', true);
  show(h('div', { class: 'row', role: 'group', 'aria-label': 'Which changes' }, side('Not staged', false), side('Staged', true)),
    summary, notes, list);
  st.open = st.open || {};
  await pages(list, st, async (offset) => {
    const res = await run('git.diffPage', { target: p.id, staged, offset, limit: 20 }, 35_000).catch(() => null);
    if (!res) return null;
    if (offset === 0) {
      summary.textContent = `${res.total} file${res.total === 1 ? '' : 's'} changed${staged ? ', staged' : ''}.`;
      notes.replaceChildren(res.hiddenSecrets ? h('p', { class: 'note' }, `${res.hiddenSecrets} file(s) left out: secret or hard-linked files are not shown to this device.`) : '');
    }
    return { items: res.files, next: res.next };
  }, (f) => fileItem(p, f, st, wrap), staged ? 'Nothing is staged.' : 'Nothing has changed.');
}

// fileItem is one file of the whole diff: a button with its name and
// counts that opens and closes its diff in place.
function fileItem(p, f, st, wrap) {
  const closed = Boolean(st.open[f.path] === false);
  const body = h('div', { class: 'diff-all-body', hidden: closed });
  const parsed = parseDiff(f.diff)[0];
  if (f.filtered) body.append(h('p', { class: 'note' }, 'This file goes through a Git filter (such as Git LFS) that gatehouse does not run for a phone. See it on the computer.'));
  else if (parsed) {
    const sec = renderFile(parsed, { wrap });
    sec.querySelector('.diff-head').remove();
    body.append(h('div', { class: wrap ? 'diff' : 'diff nowrap' }, sec));
  } else body.append(h('p', { class: 'muted' }, 'No lines changed.'));
  if (f.truncated) body.append(h('p', { class: 'muted' }, 'This file\'s diff was cut short: it is too long to send to a phone.'));
  if (!f.untracked && !f.filtered && !(parsed && parsed.status === 'added')) body.append(h('div', { class: 'row' }, h('button', { type: 'button', onclick: () => go(() => blameView(p, f.path)) }, `Blame of ${f.path}`)));
  const toggle = h('button', { type: 'button', class: 'item diff-all-file', 'aria-expanded': String(!closed), onclick: () => {
    const open = body.hidden;
    body.hidden = !open;
    st.open[f.path] = open;
    toggle.setAttribute('aria-expanded', String(open));
    mark.textContent = open ? '▾' : '▸';
  } },
  null);
  const mark = h('span', { class: 'badge', 'aria-hidden': 'true' }, closed ? '▸' : '▾');
  const status = f.untracked ? 'new' : parsed && parsed.status !== 'modified' ? fileHead(parsed).status : '';
  toggle.append(mark, ' ', h('span', { class: 'name' }, f.path, status ? h('span', { class: 'muted' }, ` (${status})`) : null, f.secret ? [' ', lock()] : null),
    f.binary || f.filtered ? null : h('span', { class: 'diff-counts', role: 'img', 'aria-label': `${f.added} lines added, ${f.deleted} removed` },
      h('span', { class: 'diff-plus' }, `+${f.added}`), ' ', h('span', { class: 'diff-minus' }, `−${f.deleted}`)));
  return h('li', { class: 'diff-all-item' }, toggle, body);
}
