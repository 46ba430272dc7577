// A checkout's changes: branch header, what is staged and not, staging a
// file or single hunks, discarding, committing; and a file's readable diff.
//
// Secret files carry their mark at every grant: below full they cannot be
// opened, staged or discarded; at full they can, but staging one or
// committing with one staged asks first, and "Stage all" leaves them out
// (a commit puts a file in the history for good, and a push hands it to
// everyone who can read the remote). New files are grouped by folder as
// git status groups an untracked folder, so sixty new files are one row.
import { h } from './dom.js';
import { parseDiff, renderDiff } from './diff.js';
import { state, run, once, note, clearNotes, button, action, allowed, setTitle, show, go, refresh, pages, lock,
  fullAccess, SECRET_WHY, pref, setPref, tabs } from './ui.js';
import { historyOf } from './history.js';
import { conflictBanner, conflicts } from './conflicts.js';
import { stashControls, amendButton } from './stash.js';
import { branchesScreen } from './branches.js';
import { at } from './routes.js';
import { blameView, diffAll } from './blame.js';

// watch asks for checkout.changed events for p, renewed before the host's
// 10 minutes run out, and refreshes the screen when one comes.
function watch(p, onChange) {
  if (state.watching !== p.id) {
    clearInterval(state.renew);
    const ask = () => state.host && state.host.call('subscribe', { targets: [p.id] }).catch(() => {});
    ask();
    state.renew = setInterval(ask, 9 * 60_000);
  }
  state.watching = p.id;
  state.onChange = onChange;
}

const STATUS = { M: 'modified', A: 'added', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed', U: 'conflict', '?': 'new' };
// remoteState says what the checkout can fetch from, pull from and push
// to. The status names the upstream; without one, a remote-tracking
// branch shows a remote exists. With neither, no remote is known (a remote
// added and never fetched looks the same; the host's status does not list
// remotes yet), and Fetch and Push say so instead of failing.
async function remoteState(p, st) {
  if (typeof st.remotes === 'number') return { remote: st.remotes > 0, upstream: Boolean(st.upstream) };
  if (st.upstream) return { remote: true, upstream: true };
  const b = await state.host.call('git.branches', { target: p.id }).catch(() => null);
  return { remote: !b || b.remote.length > 0 || Boolean(b.next), upstream: false };
}

const NO_REMOTE = 'add one on the computer with git remote add';

// isStaged and isUnstaged say which lists a status entry is in.
const isStaged = (f) => f.index !== '.' && f.index !== '?' && !f.unmerged;
const isUnstaged = (f) => f.worktree !== '.';

// names lists paths for a sentence: all of them up to five, then a count.
function names(paths) {
  return paths.length <= 5 ? paths.join(', ') : `${paths.slice(0, 5).join(', ')} and ${paths.length - 5} more`;
}

// folderOf is the folder a new file is grouped under: its first folder,
// or '' for a file at the top.
function folderOf(path) {
  const i = path.indexOf('/');
  return i < 0 ? '' : path.slice(0, i + 1);
}

// commonFolder is the deepest folder every path is in, with its slash.
function commonFolder(paths) {
  let dir = paths[0].slice(0, paths[0].lastIndexOf('/') + 1);
  for (const p of paths) while (dir && !p.startsWith(dir)) dir = dir.slice(0, dir.lastIndexOf('/', dir.length - 2) + 1);
  return dir;
}

export async function changes(p, st = {}) {
  setTitle(p.name, true);
  if (!p.git) return notGit(p);
  // A live change refreshes the list, unless the person is typing a
  // message (the refresh would take the keyboard away); the next tap does.
  watch(p, () => { if (document.activeElement !== document.getElementById('message')) refresh(); });
  const first = await run('git.status', { target: p.id }).catch(() => null);
  if (!first) return;
  const remote = await remoteState(p, first);
  const stagedList = h('ul', { class: 'list', 'aria-label': 'Staged changes' });
  const unstagedList = h('ul', { class: 'list', 'aria-label': 'Changes not staged' });
  const counts = { staged: h('span', {}, '0'), unstaged: h('span', {}, '0') };
  const seen = [];
  const listed = { files: seen, next: first.next };
  st.open = st.open || {};
  const row = (f, staged) => {
    const locked = f.secret && !fullAccess();
    // A conflicted file is listed once, and is resolved on the conflicts
    // screen rather than staged or discarded here.
    if (f.unmerged) {
      return h('li', {},
        h('button', { type: 'button', class: 'item', onclick: () => go((s) => conflicts(p, s), at.conflicts(p)) },
          h('span', { class: 'badge', title: 'conflict', 'aria-hidden': 'true' }, 'U'), ' ',
          h('span', { class: 'name' }, f.path, h('span', { class: 'sr' }, ', in conflict'), f.secret ? [' ', lock()] : null)),
        h('button', { type: 'button', onclick: () => go((s) => conflicts(p, s), at.conflicts(p)), 'aria-label': `Resolve ${f.path}` }, 'Resolve'));
    }
    const letter = staged ? f.index : f.worktree;
    const why = locked ? SECRET_WHY : '';
    return h('li', {},
      h('button', { type: 'button', class: 'item', onclick: () => (locked ? note(SECRET_WHY) : go(() => diffView(p, f, staged))) },
        h('span', { class: 'badge', title: STATUS[letter] || letter, 'aria-hidden': 'true' }, letter), ' ',
        h('span', { class: 'name' }, f.path,
          f.origPath ? h('span', { class: 'muted' }, ` (from ${f.origPath})`) : null,
          h('span', { class: 'sr' }, `, ${STATUS[letter] || letter}`),
          f.secret ? [' ', lock()] : null)),
      staged
        ? stageButton('Unstage', p, f, why, { paths: [f.path], unstage: true })
        : stageButton('Stage', p, f, why, { paths: [f.path] }),
      staged ? null : button('Discard', 'git.discard', () => {
        const what = f.worktree === '?' ? `Delete the new file ${f.path}?` : `Discard the changes to ${f.path}?`;
        if (confirm(`${what} This cannot be undone.`)) run('git.discard', { target: p.id, paths: [f.path] }).then(() => refresh(), () => {});
      }, { 'aria-label': `Discard ${f.path}` }, why));
  };
  // New files are grouped by their first folder; a group of one is the
  // file's own row, of more a folder row that opens to show them.
  const groups = new Map();
  const grouped = (f) => {
    const key = folderOf(f.path);
    let g = groups.get(key);
    if (!g) {
      g = { key, files: [], li: h('li', { class: 'group' }) };
      groups.set(key, g);
      unstagedList.append(g.li);
    }
    g.files.push(f);
    drawGroup(g);
  };
  const drawGroup = (g) => {
    if (g.files.length === 1) return g.li.replaceChildren(...row(g.files[0], false).childNodes);
    const dir = commonFolder(g.files.map((f) => f.path));
    const secrets = g.files.filter((f) => f.secret).length;
    const open = Boolean(st.open[g.key]);
    const inner = h('ul', { class: 'list sub', 'aria-label': `New files in ${dir}`, hidden: !open });
    if (open) for (const f of g.files) inner.append(row(f, false));
    g.li.replaceChildren(
      h('button', { type: 'button', class: 'item', 'aria-expanded': String(open), onclick: () => { st.open[g.key] = !open; drawGroup(g); } },
        h('span', { class: 'badge', 'aria-hidden': 'true' }, open ? '▾' : '▸'), ' ',
        h('span', { class: 'name' }, dir, h('span', { class: 'muted' }, ` (${g.files.length} new files${secrets ? `, ${secrets} secret` : ''})`),
          secrets ? [' ', lock()] : null)),
      button('Stage', 'git.stage', () => stageFolder(p, dir, listed), { 'aria-label': `Stage the new files in ${dir}` }),
      button('Discard', 'git.discard', () => discardFolder(p, dir, listed), { 'aria-label': `Discard the new files in ${dir}` }),
      inner);
  };
  let staged = 0;
  let unstaged = 0;
  const add = (f) => {
    seen.push(f);
    if (isStaged(f)) {
      stagedList.append(row(f, true));
      counts.staged.textContent = String(++staged);
    }
    if (isUnstaged(f)) {
      if (f.worktree === '?' && folderOf(f.path)) grouped(f);
      else unstagedList.append(row(f, false));
      counts.unstaged.textContent = String(++unstaged);
    }
    return null; // placed in its list above
  };
  const head = h('div', { class: 'head' },
    h('p', { class: 'row' },
      h('button', { type: 'button', class: 'link', onclick: () => go(() => historyOf(p, '')), 'aria-label': `History of ${first.branch || 'this detached HEAD'}` },
        h('strong', {}, first.branch || 'detached')),
      first.upstream ? h('span', { class: 'muted' }, `→ ${first.upstream}`) : null,
      first.ahead ? h('span', { class: 'badge', title: `${first.ahead} commits to push` }, `↑${first.ahead}`) : null,
      first.behind ? h('span', { class: 'badge', title: `${first.behind} commits to pull` }, `↓${first.behind}`) : null),
    h('div', { class: 'row' },
      action('Fetch', 'git.fetch', () => once('git.fetch', { target: p.id }).then(async (r) => {
        await refresh();
        const n = r && r.updated ? r.updated.length : 0;
        note(n ? `Fetched: ${n} branch${n === 1 ? '' : 'es'} or tag${n === 1 ? '' : 's'} updated.` : 'Fetched: nothing new on the remote.');
      }, () => {}), {},
        remote.remote ? '' : `no remote to fetch from: ${NO_REMOTE}`),
      action('Pull', 'git.pull', () => once('git.pull', { target: p.id }).then(async (r) => {
        await refresh();
        if (r && r.stopped) note(`The pull stopped on ${r.conflicted} conflicted file${r.conflicted === 1 ? '' : 's'}: tap Resolve to settle them.`);
        else if (r) note(r.rebased ? 'Pulled: your commits are now on top of the remote\'s.' : r.merged ? 'Pulled: the remote\'s commits are merged in.' : r.fastForward ? 'Pulled: up to date with the remote.' : 'Pulled.');
      }, () => {}), {},
        !remote.remote ? `no remote to pull from: ${NO_REMOTE}` : remote.upstream ? '' : 'no upstream to pull from: push this branch once first'),
      action('Push', 'git.push', () => once('git.push', { target: p.id }).then(() => { note('Pushed.'); refresh(); }, () => {}), {},
        remote.remote ? '' : `no remote to push to: ${NO_REMOTE}`),
      // Every grant may list branches and tags; what it may not change is
      // said beside each change on that screen.
      action('Branches', 'git.branches', () => go((s) => branchesScreen(p, s), at.branches(p)))));
  // The message being written survives a live refresh of the screen.
  const msg = h('textarea', { id: 'message', name: 'message', rows: 3, oninput: () => { st.message = msg.value; } });
  msg.value = st.message || '';
  const push = h('input', { type: 'checkbox', id: 'andpush', disabled: !remote.remote });
  const commit = allowed('git.commit');
  // The commit form comes before the lists, so it is in reach however
  // long they are.
  const form = commit.ok ? h('div', { class: 'commit' }, h('label', { for: 'message' }, 'Commit message'), msg,
    h('div', { class: 'row' }, h('label', { for: 'andpush', class: 'inline' }, push, ' and push'),
      remote.remote ? null : h('span', { class: 'why' }, 'no remote to push to'),
      h('button', { type: 'button', class: 'primary', onclick: async () => {
        clearNotes();
        if (!staged) return note('Stage a change first.');
        if (!msg.value.trim()) return note('Write a commit message first.');
        const secrets = await stagedSecrets(p, listed);
        if (!secrets) return;
        const them = secrets.length === 1 ? 'it' : 'them';
        if (secrets.length && !confirm(`${secretWords(secrets).replace(/^t/, 'T')} ${secrets.length === 1 ? 'is' : 'are'} staged: the commit keeps ${them} in the history for good${push.checked ? `, and the push sends ${them} to the remote` : ''}. Commit anyway?`)) {
          return note(`Not committed. Unstage ${names(secrets)} first to commit the rest.`);
        }
        const res = await once('git.commit', { target: p.id, message: msg.value, push: push.checked }).catch(() => null);
        if (res) { msg.value = ''; st.message = ''; await refresh(); note(`Committed ${res.oid.slice(0, 8)}${res.pushed ? ' and pushed' : ''}.`); }
      } }, 'Commit'),
      amendButton(p, msg, async (res) => { msg.value = ''; st.message = ''; await refresh(); note(`Amended: the last commit is now ${res.oid.slice(0, 8)}.`); })))
    : h('p', { class: 'muted' }, commit.why);
  show(tabs(p, 'changes'), conflictBanner(p), head, form, stashControls(p, st),
    h('h2', {}, 'Staged (', counts.staged, ')'), stagedList,
    h('h2', {}, 'Not staged (', counts.unstaged, ')'),
    h('div', { class: 'row actions' },
      h('button', { type: 'button', onclick: () => go(() => diffAll(p)) }, 'All changes'),
      action('Stage all', 'git.stage', () => stageAll(p, listed)),
      action('Discard all', 'git.discard', () => discardAll(p, listed))),
    unstagedList);
  let firstPage = first;
  await pages(unstagedList, st, async (offset) => {
    const res = offset === 0 && firstPage ? firstPage : await run('git.status', { target: p.id, offset }).catch(() => null);
    firstPage = null;
    if (res) listed.next = res.next;
    return res && { items: res.files, next: res.next };
  }, add);
  if (!seen.length) unstagedList.append(h('li', { class: 'muted empty' }, 'Nothing has changed.'));
}

function notGit(p) {
  show(tabs(p, 'changes'), h('p', { class: 'muted' }, 'This folder is not a git checkout: its files can be browsed and searched.'));
}

// secretWords names secret files in a sentence: "the secret file .env",
// "3 secret files (.env, a.pem, b.key)".
function secretWords(paths) {
  return paths.length === 1 ? `the secret file ${paths[0]}` : `${paths.length} secret files (${names(paths)})`;
}

function stageButton(label, p, f, why, params) {
  if (!why && f.submodule) why = 'A submodule is staged on the computer.';
  return button(label, 'git.stage', () => {
    if (label === 'Stage' && f.secret && !confirm(`${f.path} is a secret file: it may hold passwords or keys, and a commit keeps it in the history for good. Stage it anyway?`)) return;
    run('git.stage', { target: p.id, ...params }).then(() => refresh(), () => {});
  }, { 'aria-label': `${label} ${f.path}` }, why);
}

// everything loads every page of the status after the ones the screen has
// (seen), so an action on "all" or on a folder knows each file it takes.
async function everything(p, listed) {
  let all = listed.files.slice();
  let next = listed.next;
  while (next) {
    const res = await run('git.status', { target: p.id, offset: next }).catch(() => null);
    if (!res) return null;
    all = all.concat(res.files);
    next = res.next;
  }
  return all;
}

// stagedSecrets lists the staged secret files, or null when the status
// could not be read.
async function stagedSecrets(p, listed) {
  const all = await everything(p, listed);
  return all && [...new Set(all.filter((f) => f.secret && isStaged(f)).map((f) => f.path))];
}

// stageSome stages the named paths, in calls the host takes (at most
// 5,000 paths each), and says what it did and what it left out.
async function stageSome(p, paths, left) {
  let count = 0;
  let skipped = 0;
  for (let i = 0; i < paths.length; i += 5000) {
    const res = await run('git.stage', { target: p.id, paths: paths.slice(i, i + 5000) }).catch(() => null);
    if (!res) return refresh();
    count += res.count;
    skipped += res.skipped || 0;
  }
  await refresh();
  note(`Staged ${count} files${skipped ? `; ${skipped} left out (submodules or filtered files)` : ''}.${left}`);
}

// stageAll stages every change. A device below full has the host leave the
// secret files out. At full the host would take them, so the page names
// the files itself, without the secret ones, and says which it left: each
// is staged on its own row, after a question.
async function stageAll(p, listed) {
  const all = await everything(p, listed);
  if (!all) return;
  const waiting = all.filter(isUnstaged);
  const secrets = [...new Set(waiting.filter((f) => f.secret).map((f) => f.path))];
  if (!secrets.length || !fullAccess()) {
    const res = await run('git.stage', { target: p.id, all: true }).catch(() => null);
    if (!res) return;
    await refresh();
    return note(`Staged ${res.count} files${res.skipped ? `; ${res.skipped} left out (${secrets.length ? 'secret files, ' : ''}submodules or filtered files)` : ''}.`);
  }
  const rest = [...new Set(waiting.filter((f) => !f.secret && !f.submodule).map((f) => f.path))];
  const left = ` Left out ${secretWords(secrets)}: stage ${secrets.length === 1 ? 'it on its' : 'each on its'} own row if you mean to.`;
  if (!rest.length) return note(`Nothing staged.${left}`);
  await stageSome(p, rest, left);
}

// stageFolder stages the new files in dir; a secret one among them is left
// out, as in stageAll.
async function stageFolder(p, dir, listed) {
  const all = await everything(p, listed);
  if (!all) return;
  const mine = all.filter((f) => f.worktree === '?' && f.path.startsWith(dir));
  const secrets = mine.filter((f) => f.secret).map((f) => f.path);
  const left = secrets.length ? ` Left out ${secretWords(secrets)}${fullAccess() ? ': stage each on its own row if you mean to' : ''}.` : '';
  const rest = mine.filter((f) => !f.secret).map((f) => f.path);
  if (!rest.length) return note(`Nothing staged.${left}`);
  await stageSome(p, rest, left);
}

// discardFolder deletes the new files in dir, after saying so; secret
// files below full stay.
async function discardFolder(p, dir, listed) {
  const all = await everything(p, listed);
  if (!all) return;
  const paths = all.filter((f) => f.worktree === '?' && f.path.startsWith(dir) && !(f.secret && !fullAccess())).map((f) => f.path);
  if (!paths.length) return note('Nothing to discard.');
  if (!confirm(`Delete the ${paths.length} new files in ${dir}? This cannot be undone.`)) return;
  let count = 0;
  for (let i = 0; i < paths.length; i += 500) {
    const res = await run('git.discard', { target: p.id, paths: paths.slice(i, i + 500), skipFolders: true }).catch(() => null);
    if (!res) return refresh();
    count += res.count;
  }
  await refresh();
  note(`Deleted ${count} new files in ${dir}.`);
}

// discardAll throws away every change the person saw, after saying what
// that means: every page of the status is loaded first, and only the paths
// on it are sent (a file that appears after the confirmation is kept).
async function discardAll(p, listed) {
  const all = await everything(p, listed);
  if (!all) return;
  const paths = [...new Set(all.filter((f) => !(f.secret && !fullAccess())).map((f) => f.path))];
  const fresh = all.filter((f) => f.worktree === '?').length;
  if (!paths.length) return note('Nothing to discard.');
  const what = `Discard all ${paths.length} changed files?${fresh ? ` ${fresh} new files will be deleted.` : ''} This cannot be undone.`;
  if (!confirm(what)) return;
  let count = 0;
  let skipped = all.length - paths.length;
  for (let i = 0; i < paths.length; i += 500) {
    const res = await run('git.discard', { target: p.id, paths: paths.slice(i, i + 500), skipFolders: true }).catch(() => null);
    if (!res) return refresh();
    count += res.count;
    skipped += res.skipped || 0;
  }
  await refresh();
  note(`Discarded ${count} files${skipped ? `; ${skipped} left as they are (secret files, folders or submodules)` : ''}.`);
}

// diffView is one file's diff, readable: +/- counts, line numbers, words
// that changed, wrapped unless the person turned wrapping off, and a stage
// (or unstage) button on each hunk.
export async function diffView(p, f, staged) {
  setTitle(f.path, true);
  const res = await run('git.diff', { target: p.id, path: f.path, staged }, 25_000).catch(() => null);
  if (!res) return;
  const wrap = pref('wrap', true);
  const files = parseDiff(res.diff);
  const hunks = allowed('git.stageHunks');
  const untracked = !staged && f.worktree === '?';
  const why = !hunks.ok ? hunks.why : untracked ? 'A new file is staged whole: use Stage.' : '';
  const hunkAction = {
    label: staged ? 'Unstage hunk' : 'Stage hunk',
    disabled: Boolean(why),
    why,
    onblocked: (w) => note(w),
    onclick: async (index) => {
      clearNotes();
      const out = await run('git.stageHunks', { target: p.id, path: f.path, hunks: [index], diffHash: res.hash, staged }).catch(() => null);
      await refresh();
      if (out) note(staged ? 'Unstaged that hunk.' : 'Staged that hunk.');
    },
  };
  const wrapToggle = h('input', { type: 'checkbox', id: 'wrap', checked: wrap || false, onchange: (e) => {
    setPref('wrap', e.target.checked);
    body.classList.toggle('nowrap', !e.target.checked);
  } });
  const body = renderDiff(files, { wrap, hunkAction: res.hash ? hunkAction : null });
  show(h('div', { class: 'row' }, h('h2', { class: 'grow' }, staged ? 'Staged changes' : 'Changes'),
    h('label', { for: 'wrap', class: 'inline' }, wrapToggle, ' Wrap lines')),
    res.hiddenSecrets ? h('p', { class: 'note' }, `${res.hiddenSecrets} file(s) left out: secret or hard-linked files are not shown to this device.`) : null,
    res.hiddenFiltered ? h('p', { class: 'note' }, `${res.hiddenFiltered} file(s) left out: they go through a Git filter (such as Git LFS) that gatehouse does not run for a phone. See them on the computer.`) : null,
    res.diff ? body : h('p', { class: 'muted' }, 'No differences.'),
    res.truncated ? h('p', { class: 'muted' }, 'The diff was cut short: it is too long to send to a phone.') : null,
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: () => go(() => historyOf(p, f.path)) }, 'History of this file'),
      untracked ? null : h('button', { type: 'button', onclick: () => go(() => blameView(p, f.path)) }, 'Blame')));
}

