// Worktrees: a checkout's linked worktrees with their status against the
// main checkout, and creating (on a new branch), merging back and removing
// them, each answered with the host's own sentence when it refuses.
import { h } from './dom.js';
import { state, once, quiet, note, action, setTitle, show, go, refresh, place, tabs, project } from './ui.js';
import { at } from './routes.js';
import { changes } from './changes.js';
import { conflicts } from './conflicts.js';

export async function worktrees(p, st = {}) {
  place(at.worktrees(p));
  state.onChange = null;
  setTitle(p.name, true);
  const res = await project(p.id);
  const all = state.projects || [];
  const main = p.kind === 'worktree' ? all.find((x) => x.id === p.parent) || null : res || p;
  const linked = main ? all.filter((x) => x.kind === 'worktree' && x.parent === main.id) : [];
  const list = h('ul', { class: 'list', 'aria-label': 'Worktrees' });
  for (const w of linked) {
    const status = h('span', { class: 'muted small' }, 'checking…');
    list.append(h('li', { class: 'wt' },
      h('button', { type: 'button', class: 'item', onclick: () => go((s) => changes(w, s), at.changes(w)) },
        h('strong', {}, w.branch || w.name), h('br'), status),
      h('div', { class: 'row' },
        action('Merge back', 'worktree.merge', () => merge(w, main), { 'aria-label': `Merge back ${w.branch || w.name} into ${main.branch || main.name}` }),
        action('Remove', 'worktree.remove', () => remove(w), { 'aria-label': `Remove the worktree of ${w.branch || w.name}` }))));
    quiet('worktree.status', { target: w.id }).then((st) => {
      if (!st) { status.textContent = 'status not available'; return; }
      const parts = [st.clean ? 'clean' : 'has changes'];
      if (st.ahead) parts.push(`${st.ahead} commit${st.ahead === 1 ? '' : 's'} to merge back`);
      if (st.behind) parts.push(`${st.behind} behind`);
      status.textContent = parts.join(' · ');
    });
  }
  // The branch name being typed survives the screen being drawn again.
  const branch = h('input', { type: 'text', id: 'wt-branch', name: 'branch', autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', placeholder: 'gatehouse/…',
    oninput: () => { st.branch = branch.value; } });
  branch.value = st.branch || '';
  show(tabs(p, 'worktrees'),
    main && main.id !== p.id ? h('p', { class: 'muted' }, `This is a worktree of ${main.name}.`) : null,
    h('h2', {}, `Worktrees (${linked.length})`),
    linked.length ? list : h('p', { class: 'muted' }, 'No worktrees yet. A worktree is a second checkout of the repository on its own branch, to work on beside this one.'),
    main ? h('form', { class: 'create', onsubmit: (e) => { e.preventDefault(); create(main, branch.value.trim(), st); } },
      h('h2', {}, 'New worktree'),
      h('label', { for: 'wt-branch' }, 'Branch name (a new branch; leave empty for one named by the time)'), branch,
      h('div', { class: 'row' }, action('Create worktree', 'worktree.create', () => create(main, branch.value.trim(), st)))) : null);
}

async function create(main, branch, st) {
  const res = await once('worktree.create', { target: main.id, branch: branch || undefined }, 60_000).catch(() => null);
  if (!res) return;
  st.branch = '';
  await refresh();
  note(`Made a worktree on ${res.branch}.`);
}

async function merge(w, main) {
  if (!confirm(`Merge ${w.branch || w.name} into ${main.branch || main.name} in ${main.name}?`)) return;
  const res = await once('worktree.merge', { target: w.id }, 60_000).catch((e) => e);
  if (res instanceof Error) {
    // The host refuses a conflicting merge unless asked to stop on it.
    if (!/Merge it anyway/.test(res.message || '')) return;
    if (!confirm(`${w.branch || w.name} conflicts with ${main.branch || main.name}. Merge anyway? The merge stops in ${main.name} with the conflicted files, which you then resolve (or abort) on its conflicts screen.`)) return;
    const stopped = await once('worktree.merge', { target: w.id, stopOnConflict: true }, 60_000).catch(() => null);
    if (stopped) go((s) => conflicts(main, s), at.conflicts(main));
    return;
  }
  if (!res) return;
  await refresh();
  note(`Merged ${w.branch || w.name} into ${main.branch || main.name}.`);
}

async function remove(w) {
  const del = confirm(`Remove the worktree of ${w.branch || w.name}? Its folder is deleted on the computer.\n\nOK removes it; you are asked about the branch next.`);
  if (!del) return;
  const deleteBranch = confirm(`Also delete the branch ${w.branch || w.name}? Cancel keeps the branch.`);
  const res = await once('worktree.remove', { target: w.id, deleteBranch: deleteBranch || undefined }, 60_000).catch(() => null);
  if (!res) return;
  await refresh();
  note(`Removed the worktree of ${w.branch || w.name}${deleteBranch ? ' and its branch' : ''}.`);
}
