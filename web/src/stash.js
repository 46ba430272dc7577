// Everyday changes besides a commit: stash (push with a message, the list,
// a stash's diff, apply, pop, drop), amend the last commit, revert a
// commit. A stash is named to the computer by its place in the list and
// its id as this page read them, so a stash made since never takes its
// place. Amend asks the computer first (git.canAmend) and is disabled with
// its reason when the last commit is pushed.
import { h } from './dom.js';
import { parseDiff, renderDiff } from './diff.js';
import { run, once, setTitle, show, go, place, pages, ago, pref, note, clearNotes, refresh, action, disable, allowed, reason, fullReason, tabs } from './ui.js';
import { at } from './routes.js';

// stashControls is the changes screen's stash form: a message, whether new
// files go too, Stash changes, and the way to the list.
export function stashControls(p, st) {
  const msg = h('input', { type: 'text', id: 'stash-message', name: 'stash-message', maxlength: 300, autocomplete: 'off',
    oninput: () => { st.stashMessage = msg.value; } });
  msg.value = st.stashMessage || '';
  const untracked = h('input', { type: 'checkbox', id: 'stash-untracked' });
  const can = allowed('git.stash');
  return h('details', { class: 'stash-form', open: Boolean(st.stashOpen), ontoggle: (e) => { st.stashOpen = e.target.open; } },
    h('summary', {}, 'Stash'),
    can.ok ? [h('label', { for: 'stash-message' }, 'Stash message'), msg,
      h('div', { class: 'row' },
        h('label', { for: 'stash-untracked', class: 'inline' }, untracked, ' with new files'),
        action('Stash changes', 'git.stash', async () => {
          const res = await run('git.stash', { target: p.id, message: msg.value.trim() || undefined, untracked: untracked.checked }).catch(() => null);
          if (!res) return;
          msg.value = '';
          st.stashMessage = '';
          await refresh();
          note(`Stashed ${res.files} file${res.files === 1 ? '' : 's'}.`);
        }))] : h('p', { class: 'muted' }, can.why),
    h('div', { class: 'row' }, h('button', { type: 'button', class: 'link', onclick: () => go((s) => stashes(p, s), at.stashes(p)) }, 'Stashes')));
}

// stashes is the list screen: each stash with its message, branch and age,
// and Show, Apply, Pop and Drop.
export async function stashes(p, st = {}) {
  place(at.stashes(p));
  setTitle(`${p.name} stashes`, true);
  const list = h('ul', { class: 'list stashes', 'aria-label': 'Stashes' });
  show(tabs(p, 'changes'), h('h2', {}, 'Stashes'), list);
  await pages(list, st, async (offset) => {
    const res = await run('git.stashes', { target: p.id, offset: offset || undefined }).catch(() => null);
    return res && { items: res.stashes, next: res.next };
  }, (s) => stashRow(p, s), 'No stashes.');
}

function stashRow(p, s) {
  const ref = { target: p.id, index: s.index, oid: s.oid };
  const label = s.message || `stash ${s.index}`;
  const applied = async (res, popped) => {
    if (!res) return;
    await refresh();
    if (res.conflict) {
      note(`Stopped on a conflict: the changes clash with the files here. The stash is kept${popped ? ' (a pop drops it only once it applies cleanly)' : ''}; resolve the conflicts on the Changes screen.`);
    } else {
      note(popped ? `Popped "${label}": its changes are back and the stash is dropped.` : `Applied "${label}"; the stash is kept.`);
    }
  };
  return h('li', { class: 'stash' },
    h('button', { type: 'button', class: 'item', onclick: () => go(() => stashView(p, s)) },
      h('span', { class: 'subject' }, label),
      h('span', { class: 'muted small' }, s.branch ? `on ${s.branch} · ` : '', h('time', { datetime: s.date, title: s.date }, ago(s.date)))),
    h('div', { class: 'row' },
      action('Apply', 'git.stashApply', () => run('git.stashApply', ref).then((r) => applied(r, false), () => {}), { 'aria-label': `Apply ${label}` }),
      action('Pop', 'git.stashApply', () => run('git.stashApply', { ...ref, pop: true }).then((r) => applied(r, true), () => {}), { 'aria-label': `Pop ${label}` }, fullReason('git.stashApply')),
      action('Drop', 'git.stashDrop', () => {
        if (!confirm(`Drop the stash "${label}"? Its changes are deleted and cannot be brought back.`)) return undefined;
        return run('git.stashDrop', ref).then(async () => { await refresh(); note(`Dropped "${label}".`); }, () => {});
      }, { 'aria-label': `Drop ${label}` })));
}

// stashView shows one stash's changes as a diff.
export async function stashView(p, s) {
  setTitle(s.message || `stash ${s.index}`, true);
  const res = await run('git.stashShow', { target: p.id, index: s.index, oid: s.oid }, 25_000).catch(() => null);
  if (!res) return;
  const files = parseDiff(res.diff);
  show(h('article', { class: 'commit-view' },
    h('h2', {}, res.message || `stash ${s.index}`),
    h('p', { class: 'muted small' }, res.branch ? `Made on ${res.branch} · ` : '', h('time', { datetime: res.date, title: res.date }, ago(res.date)),
      ' · ', h('code', {}, s.oid.slice(0, 12))),
    h('h3', {}, `${files.length} file${files.length === 1 ? '' : 's'} changed`),
    res.untracked ? h('p', { class: 'muted' }, 'It holds new files too, shown as added.') : null,
    res.hiddenSecrets ? h('p', { class: 'note' }, `${res.hiddenSecrets} file(s) left out: secret or hard-linked files are not shown to this device.`) : null,
    renderDiff(files, { wrap: pref('wrap', true) }),
    res.truncated ? h('p', { class: 'muted' }, 'The diff was cut short: it is too long to send to a phone.') : null));
}

// amendButton is the commit form's Amend last commit: the computer says
// first whether the last commit may be amended, and the button is disabled
// with its reason when it may not (pushed, tagged, a merge, no branch). The
// amend names the commit and branch the computer showed, so a branch
// switched to there since is refused, not rewritten.
export function amendButton(p, msg, done) {
  const btn = h('button', { type: 'button', onclick: async () => {
    clearNotes();
    const message = msg.value.trim();
    if (!confirm(`Replace the last commit "${btn.dataset.subject}" with ${message ? 'this message' : 'its own message'} and what is staged?`)) return;
    const seen = { oid: btn.dataset.oid, branch: btn.dataset.branch };
    const res = await once('git.amend', { target: p.id, ...seen, message: message || undefined }).catch(() => null);
    if (res) done(res);
  } }, 'Amend last commit');
  const slot = h('span', { class: 'amend' }, btn);
  const why = reason('git.amend');
  if (why) {
    disable(btn, why);
    return slot;
  }
  btn.disabled = true;
  run('git.canAmend', { target: p.id }).then((a) => {
    btn.dataset.subject = a.subject || '';
    btn.dataset.oid = a.oid || '';
    btn.dataset.branch = a.branch || '';
    if (a.ok) btn.disabled = false;
    else disable(btn, a.reason);
  }, () => {});
  return slot;
}

// revertButton is a commit's Revert, after a confirmation.
export function revertButton(p, oid, subject) {
  return action('Revert this commit', 'git.revert', async () => {
    if (!confirm(`Make a new commit that undoes "${subject}"?`)) return;
    const res = await once('git.revert', { target: p.id, oid }).catch(() => null);
    if (!res) return;
    if (res.conflict) note('Stopped on a conflict: the revert clashes with later changes. Resolve the conflicts on the Changes screen, or abort the revert there.');
    else note(`Reverted: new commit ${res.oid.slice(0, 8)}.`);
  });
}
