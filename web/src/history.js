// History: the commit list (git.log, paged as it scrolls), of the branch
// or of one file, and a commit's view (git.show): its message, author,
// files and their diffs.
import { h } from './dom.js';
import { parseDiff, renderDiff, countsLabel } from './diff.js';
import { run, setTitle, show, go, pages, ago, pref, place, tabs } from './ui.js';
import { at } from './routes.js';
import { revertButton } from './stash.js';

export async function historyOf(p, path, st = {}) {
  place(at.history(p, path));
  setTitle(path ? `History of ${path}` : `${p.name} history`, true);
  const list = h('ul', { class: 'list', 'aria-label': path ? `Commits that changed ${path}` : 'Commits' });
  show(path ? null : tabs(p, 'history'), path ? h('h2', {}, 'Commits that changed ', h('code', {}, path)) : null, list);
  await pages(list, st, async (before) => {
    const res = await run('git.log', { target: p.id, before: before || undefined, path: path || undefined, limit: 50 }).catch(() => null);
    return res && { items: res.commits, next: res.next };
  }, (c) => h('li', {}, h('button', { type: 'button', class: 'item commit-row', onclick: () => go(() => commitView(p, c.oid, path)) },
    h('span', { class: 'subject' }, c.subject || '(no message)'),
    h('span', { class: 'muted small' }, h('code', {}, c.oid.slice(0, 8)), ` · ${c.author} · `, h('time', { datetime: c.date, title: c.date }, ago(c.date))))),
  path ? 'No commit changed this file.' : 'No commits yet.');
}

export async function commitView(p, oid, path) {
  place(at.commit(p, oid));
  setTitle(oid.slice(0, 8), true);
  const res = await run('git.show', { target: p.id, oid }, 25_000).catch(() => null);
  if (!res) return;
  const files = parseDiff(res.diff);
  const [subject, ...rest] = (res.message || res.commit.subject).split('\n');
  const body = rest.join('\n').trim();
  const anchor = (i) => `file-${i}`;
  const diff = renderDiff(files, { wrap: pref('wrap', true) });
  diff.querySelectorAll('section').forEach((s, i) => { s.id = anchor(i); });
  show(h('article', { class: 'commit-view' },
    h('h2', {}, subject),
    body ? h('p', { class: 'message' }, body) : null,
    h('p', { class: 'muted small' }, `${res.commit.author} · `, h('time', { datetime: res.commit.date, title: res.commit.date }, ago(res.commit.date)),
      ' · ', h('code', {}, oid.slice(0, 12))),
    res.parents.length > 1 ? null : h('div', { class: 'row actions' }, revertButton(p, res.commit.oid, subject)),
    res.parents.length > 1 ? h('p', { class: 'muted' }, `A merge of ${res.parents.length} parents: the files below are those where the merge differs from every parent.`) : null,
    h('h3', {}, `${files.length} file${files.length === 1 ? '' : 's'} changed`),
    h('ul', { class: 'list files' }, files.map((f, i) => h('li', {}, h('a', { class: 'item', href: `#${anchor(i)}`, onclick: (e) => {
      e.preventDefault();
      document.getElementById(anchor(i)).scrollIntoView();
    } }, f.path, ' ', h('span', { class: 'counts' }, h('span', { class: 'sr' }, countsLabel(f)),
      h('span', { class: 'plus', 'aria-hidden': 'true' }, `+${f.adds}`), ' ', h('span', { class: 'minus', 'aria-hidden': 'true' }, `−${f.dels}`)))))),
    res.hiddenSecrets ? h('p', { class: 'note' }, `${res.hiddenSecrets} file(s) left out: secret or hard-linked files are not shown to this device.`) : null,
    diff,
    res.truncated ? h('p', { class: 'muted' }, 'The diff was cut short: it is too long to send to a phone.') : null,
    path ? h('p', {}, h('button', { type: 'button', onclick: () => window.history.back() }, `Back to the history of ${path}`)) : null));
}
