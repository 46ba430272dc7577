// Branches and tags: a checkout's local and remote branches (switch,
// create from the current branch or a chosen one, rename, delete, and a
// remote branch tapped to switch to it), and its tags (list, create
// lightweight or annotated, push one). Every refusal is the host's own
// sentence, said beside the button tapped; deleting a branch with commits
// merged nowhere asks again, naming how many, before it forces.
import { h } from './dom.js';
import { Refusal } from './api.js';
import { state, note, say, action, run, once, reason, setTitle, show, go, refresh, place, pages, ago } from './ui.js';
import { at } from './routes.js';

const short = (oid) => String(oid || '').slice(0, 8);

// field is a labelled text input whose value survives the screen being
// drawn again (st[key]).
function field(id, label, st, key, attrs = {}) {
  const input = h('input', { type: 'text', id, name: key, autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', ...attrs,
    oninput: () => { st[key] = input.value; } });
  input.value = st[key] || '';
  return [h('label', { for: id }, label), input];
}

export async function branchesScreen(p, st = {}) {
  place(at.branches(p));
  state.onChange = null;
  setTitle(`Branches · ${p.name}`, true);
  const local = h('ul', { class: 'list branches', 'aria-label': 'Local branches' });
  const remote = h('ul', { class: 'list branches', 'aria-label': 'Remote branches' });
  const start = h('select', { id: 'br-start', name: 'start', onchange: () => { st.start = start.value; } },
    h('option', { value: '' }, 'the current branch'));
  const [nameLabel, name] = field('br-name', 'Name of the new branch', st, 'name', { placeholder: 'fix/…' });
  const switchTo = h('input', { type: 'checkbox', id: 'br-switch', checked: st.switchTo !== false, onchange: () => { st.switchTo = switchTo.checked; } });
  const form = h('form', { class: 'create', onsubmit: (e) => { e.preventDefault(); create(p, st, name, start, switchTo); } },
    h('h2', {}, 'New branch'),
    nameLabel, name,
    h('label', { for: 'br-start' }, 'Start from'), start,
    h('div', { class: 'row' }, h('label', { for: 'br-switch', class: 'inline' }, switchTo, ' Switch to it'),
      action('Create branch', 'git.createBranch', () => create(p, st, name, start, switchTo))));
  // A device that may not change branches reads why once, not beside
  // every row's buttons.
  const why = reason('git.switchBranch');
  show(
    why ? h('p', { class: 'why' }, `Switching, renaming and deleting branches ${why}.`) : null,
    h('div', { class: 'row' }, h('h2', { class: 'grow' }, 'Local branches'),
      h('button', { type: 'button', class: 'link', onclick: () => go((s) => tagsScreen(p, s), at.tags(p)) }, 'Tags')),
    local,
    h('h2', {}, 'Remote branches'),
    h('p', { class: 'muted small' }, 'Tap one to switch to it: a local branch of the same name is made to track it.'),
    remote,
    form);
  let current = '';
  const starts = new Set();
  await pages(local, st, async (offset) => {
    const res = await run('git.branches', { target: p.id, offset: offset || undefined }).catch(() => null);
    if (!res) return null;
    current = res.current;
    return { items: res.local.map((b) => ({ b, remote: false })).concat(res.remote.map((b) => ({ b, remote: true }))), next: res.next };
  }, ({ b, remote: isRemote }) => {
    if (!starts.has(b)) {
      starts.add(b);
      const o = h('option', { value: b }, isRemote ? `${b} (remote)` : b);
      start.append(o);
      if (st.start === b) start.value = b;
    }
    if (isRemote) {
      remote.append(h('li', {}, why ? h('span', { class: 'item' }, b) : action(b, 'git.switchRemoteBranch', () => switchRemote(p, b), { class: 'item', 'aria-label': `Switch to the remote branch ${b}` })));
      return null;
    }
    return localRow(p, b, b === current, why);
  }, 'No branches yet: make the first commit.');
  if (!remote.children.length) remote.append(h('li', { class: 'muted empty' }, 'No remote branches. Fetch to see a remote\'s branches.'));
  if (!local.children.length) local.append(h('li', { class: 'muted empty' }, 'No local branches.'));
}

function localRow(p, b, isCurrent, why) {
  if (why) return h('li', { class: 'branch' }, h('span', { class: 'item' }, isCurrent ? h('strong', {}, b) : b, isCurrent ? ' (current)' : ''));
  const sw = isCurrent
    ? h('span', { class: 'item' }, h('strong', {}, b), ' (current)')
    : action(b, 'git.switchBranch', () => switchTo(p, b), { class: 'item', 'aria-label': `Switch to ${b}` });
  const del = action('Delete', 'git.deleteBranch', () => remove(p, b), { 'aria-label': `Delete the branch ${b}` },
    isCurrent ? 'checked out here: switch to another branch first' : '');
  return h('li', { class: 'branch' }, sw,
    h('div', { class: 'row' },
      action('Rename', 'git.renameBranch', () => rename(p, b), { 'aria-label': `Rename the branch ${b}` }),
      del));
}

async function switchTo(p, b) {
  const ok = await run('git.switchBranch', { target: p.id, branch: b }, 25_000).then(() => true, () => false);
  if (!ok) return;
  await refresh();
  note(`Switched to ${b}.`);
}

async function switchRemote(p, b) {
  const res = await run('git.switchRemoteBranch', { target: p.id, remote: b }, 25_000).catch(() => null);
  if (!res) return;
  await refresh();
  note(`Switched to ${res.branch}, tracking ${b}.`);
}

async function create(p, st, name, start, switchTo) {
  const n = name.value.trim();
  if (!n) return say('Write a name for the new branch.');
  const res = await run('git.createBranch', { target: p.id, name: n, start: start.value || undefined, switch: switchTo.checked || undefined }, 25_000).catch(() => null);
  if (!res) return undefined;
  st.name = '';
  await refresh();
  return note(switchTo.checked ? `Made ${n} at ${short(res.oid)} and switched to it.` : `Made ${n} at ${short(res.oid)}.`);
}

async function rename(p, b) {
  const to = (prompt(`New name for ${b}`, b) || '').trim();
  if (!to || to === b) return;
  const ok = await run('git.renameBranch', { target: p.id, from: b, to }, 25_000).then(() => true, () => false);
  if (!ok) return;
  await refresh();
  note(`Renamed ${b} to ${to}.`);
}

// remove deletes a branch; one with commits merged nowhere is refused with
// the count, said beside the button, and asked again before it is forced.
async function remove(p, b) {
  if (!confirm(`Delete the branch ${b}?`)) return;
  let res;
  try {
    res = await state.host.call('git.deleteBranch', { target: p.id, branch: b }, 25_000);
  } catch (e) {
    if (!(e instanceof Refusal) || e.code !== 'CONFLICT') {
      say(e instanceof Refusal ? e.message : 'Something went wrong talking to the computer.');
      return;
    }
    say(e.message);
    if (!confirm(`${e.message}\n\nDelete ${b} anyway, losing those commits?`)) return;
    res = await run('git.deleteBranch', { target: p.id, branch: b, force: true }, 25_000).catch(() => null);
  }
  if (!res) return;
  await refresh();
  note(`Deleted ${b}. It was at ${short(res.oid)}; to make it again on the computer: git branch ${b} ${res.oid}`);
}

export async function tagsScreen(p, st = {}) {
  place(at.tags(p));
  state.onChange = null;
  setTitle(`Tags · ${p.name}`, true);
  const list = h('ul', { class: 'list tags', 'aria-label': 'Tags' });
  const [nameLabel, name] = field('tag-name', 'Name of the new tag', st, 'name', { placeholder: 'v1.0.0' });
  const [atLabel, atInput] = field('tag-at', 'At commit (an id; empty for the current commit)', st, 'at', { inputmode: 'latin' });
  const msg = h('textarea', { id: 'tag-message', name: 'message', rows: 3, oninput: () => { st.message = msg.value; } });
  msg.value = st.message || '';
  const form = h('form', { class: 'create', onsubmit: (e) => { e.preventDefault(); createTag(p, st, name, atInput, msg); } },
    h('h2', {}, 'New tag'),
    nameLabel, name, atLabel, atInput,
    h('label', { for: 'tag-message' }, 'Message (makes an annotated tag; leave empty for a lightweight one)'), msg,
    h('div', { class: 'row' }, action('Create tag', 'git.createTag', () => createTag(p, st, name, atInput, msg))));
  const why = reason('git.pushTag');
  show(why ? h('p', { class: 'why' }, `Pushing a tag ${why}.`) : null, h('h2', {}, 'Tags'), list, form);
  await pages(list, st, async (offset) => {
    const res = await run('git.tags', { target: p.id, offset: offset || undefined }).catch(() => null);
    if (!res) return null;
    return { items: res.tags, next: res.next };
  }, (t) => h('li', { class: 'tag' },
    h('div', { class: 'item' }, h('strong', {}, t.name), ' ',
      h('span', { class: 'badge' }, t.annotated ? 'annotated' : 'lightweight'), h('br'),
      h('span', { class: 'muted small' }, `${short(t.target)} · ${ago(t.date)}${t.subject ? ` · ${t.subject}` : ''}`)),
    why ? null : h('div', { class: 'row' }, action('Push', 'git.pushTag', () => pushTag(p, t.name), { 'aria-label': `Push the tag ${t.name}` }))),
  'No tags yet.');
}

async function createTag(p, st, name, atInput, msg) {
  const n = name.value.trim();
  if (!n) return say('Write a name for the new tag.');
  const res = await run('git.createTag', { target: p.id, name: n, at: atInput.value.trim() || undefined, message: msg.value.trim() ? msg.value : undefined }, 25_000).catch(() => null);
  if (!res) return undefined;
  st.name = '';
  st.at = '';
  st.message = '';
  await refresh();
  return note(`Made the ${res.annotated ? 'annotated' : 'lightweight'} tag ${n} at ${short(res.target)}.`);
}

async function pushTag(p, n) {
  const ok = await once('git.pushTag', { target: p.id, name: n }).then(() => true, () => false);
  if (ok) note(`Pushed the tag ${n}.`);
}
