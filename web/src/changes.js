// A checkout's changes: branch header, what is staged and not, staging a
// file or single hunks, discarding, committing; and a file's readable diff.
import { h } from './dom.js';
import { parseDiff, renderDiff } from './diff.js';
import { state, run, once, note, clearNotes, button, allowed, setTitle, show, go, refresh, pages, lock,
  fullAccess, SECRET_WHY, pref, setPref } from './ui.js';
import { tabs } from './main.js';
import { historyOf } from './history.js';

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

export async function changes(p, st = {}) {
  setTitle(p.name, true);
  if (!p.git) return notGit(p);
  // A live change refreshes the list, unless the person is typing a
  // message (the refresh would take the keyboard away); the next tap does.
  watch(p, () => { if (document.activeElement !== document.getElementById('message')) refresh(); });
  const first = await run('git.status', { target: p.id }).catch(() => null);
  if (!first) return;
  const stagedList = h('ul', { class: 'list', 'aria-label': 'Staged changes' });
  const unstagedList = h('ul', { class: 'list', 'aria-label': 'Changes not staged' });
  const counts = { staged: h('span', {}, '0'), unstaged: h('span', {}, '0') };
  const seen = [];
  const row = (f, staged) => {
    const secret = f.secret && !fullAccess();
    const letter = staged ? f.index : f.worktree;
    const why = secret ? SECRET_WHY : '';
    return h('li', {},
      h('button', { type: 'button', class: 'item', onclick: () => (secret ? note(SECRET_WHY) : go(() => diffView(p, f, staged))) },
        h('span', { class: 'badge', title: STATUS[letter] || letter, 'aria-hidden': 'true' }, letter), ' ', f.path,
        f.origPath ? h('span', { class: 'muted' }, ` (from ${f.origPath})`) : null,
        h('span', { class: 'sr' }, `, ${STATUS[letter] || letter}`),
        secret ? [' ', lock()] : null),
      staged
        ? stageButton('Unstage', p, f, why, { paths: [f.path], unstage: true })
        : stageButton('Stage', p, f, why, { paths: [f.path] }),
      staged ? null : button('Discard', 'git.discard', () => {
        const what = f.worktree === '?' ? `Delete the new file ${f.path}?` : `Discard the changes to ${f.path}?`;
        if (confirm(`${what} This cannot be undone.`)) run('git.discard', { target: p.id, paths: [f.path] }).then(() => refresh(), () => {});
      }, { 'aria-label': `Discard ${f.path}` }, why));
  };
  let staged = 0;
  let unstaged = 0;
  const add = (f) => {
    seen.push(f);
    if (f.index !== '.' && f.index !== '?') {
      stagedList.append(row(f, true));
      counts.staged.textContent = String(++staged);
    }
    if (f.worktree !== '.') {
      unstagedList.append(row(f, false));
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
      button('Fetch', 'git.fetch', () => once('git.fetch', { target: p.id }).then(() => refresh(), () => {})),
      button('Pull', 'git.pull', () => once('git.pull', { target: p.id }).then(() => refresh(), () => {})),
      button('Push', 'git.push', () => once('git.push', { target: p.id }).then(() => { note('Pushed.'); refresh(); }, () => {})),
      button('Switch branch', 'git.switchBranch', () => go(() => branches(p)))));
  // The message being written survives a live refresh of the screen.
  const msg = h('textarea', { id: 'message', name: 'message', rows: 3, oninput: () => { st.message = msg.value; } });
  msg.value = st.message || '';
  const push = h('input', { type: 'checkbox', id: 'andpush' });
  const commit = allowed('git.commit');
  show(tabs(p, 'changes'), head,
    h('h2', {}, 'Staged (', counts.staged, ')'), stagedList,
    h('h2', {}, 'Not staged (', counts.unstaged, ')'), unstagedList,
    h('div', { class: 'row actions' },
      button('Stage all', 'git.stage', () => run('git.stage', { target: p.id, all: true }).then(() => refresh(), () => {})),
      button('Discard all', 'git.discard', () => discardAll(p, seen, first))),
    commit.ok ? h('div', { class: 'commit' }, h('label', { for: 'message' }, 'Commit message'), msg,
      h('div', { class: 'row' }, h('label', { for: 'andpush', class: 'inline' }, push, ' and push'),
        h('button', { type: 'button', class: 'primary', onclick: async () => {
          clearNotes();
          if (!staged) return note('Stage a change first.');
          if (!msg.value.trim()) return note('Write a commit message first.');
          const res = await once('git.commit', { target: p.id, message: msg.value, push: push.checked }).catch(() => null);
          if (res) { msg.value = ''; st.message = ''; await refresh(); note(`Committed ${res.oid.slice(0, 8)}${res.pushed ? ' and pushed' : ''}.`); }
        } }, 'Commit')))
      : h('p', { class: 'muted' }, commit.why));
  let firstPage = first;
  await pages(unstagedList, st, async (offset) => {
    const res = offset === 0 && firstPage ? firstPage : await run('git.status', { target: p.id, offset }).catch(() => null);
    firstPage = null;
    return res && { items: res.files, next: res.next };
  }, add);
  if (!seen.length) unstagedList.append(h('li', { class: 'muted empty' }, 'Nothing has changed.'));
}

function notGit(p) {
  show(tabs(p, 'changes'), h('p', { class: 'muted' }, 'This folder is not a git checkout: its files can be browsed and searched.'));
}

function stageButton(label, p, f, why, params) {
  if (!why && f.submodule) why = 'A submodule is staged on the computer.';
  return button(label, 'git.stage', () => run('git.stage', { target: p.id, ...params }).then(() => refresh(), () => {}),
    { 'aria-label': `${label} ${f.path}` }, why);
}

// discardAll throws away every change the person saw, after saying what
// that means: every page of the status is loaded first, and only the paths
// on it are sent (a file that appears after the confirmation is kept).
async function discardAll(p, seen, first) {
  let all = seen.slice();
  let next = first.next;
  while (next) {
    const res = await run('git.status', { target: p.id, offset: next }).catch(() => null);
    if (!res) return;
    all = all.concat(res.files);
    next = res.next;
  }
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
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: () => go(() => historyOf(p, f.path)) }, 'History of this file')));
}

async function branches(p) {
  setTitle('Switch branch', true);
  const list = h('ul', { class: 'list', 'aria-label': 'Branches' });
  show(list);
  let current = null;
  await pages(list, {}, async (offset) => {
    const res = await run('git.branches', { target: p.id, offset: offset || undefined }).catch(() => null);
    if (!res) return null;
    current = res.current;
    return { items: res.local.map((b) => ({ b, remote: false })).concat(res.remote.map((b) => ({ b, remote: true }))), next: res.next };
  }, ({ b, remote }) => h('li', {},
    remote ? h('span', { class: 'item muted' }, b)
      : h('button', { type: 'button', class: 'item', 'aria-current': b === current ? 'true' : false, onclick: async () => {
        if (b === current) return;
        const ok = await run('git.switchBranch', { target: p.id, branch: b }, 25_000).then(() => true, () => false);
        if (ok) window.history.back();
      } }, b, b === current ? ' (current)' : '')));
}

