// Conflicts: what a checkout has in progress (a merge, rebase, cherry-pick,
// revert, or a stash apply that stopped), each conflicted file with its
// regions as git's own merge-file cut them (ours, the base, theirs, and the
// lines around them), and resolving them: per region Take ours / Take
// theirs / Take both, per file Take ours / Take theirs (git checkout
// --ours/--theirs, "Whole file: ours"), an editor for the whole result (full
// access only: it is editing the file), Mark resolved as the file is now;
// then Conclude (commit the merge, continue the rebase) or Abort, after a
// confirmation naming what it throws away. Every resolution carries the hash
// of what this screen showed, and Conclude and Abort the op and id of the
// operation it showed, so a file changed or an operation started on the
// computer since is refused with the host's sentence.
import { h } from './dom.js';
import { state, run, once, quiet, note, action, fullReason, setTitle, show, go, refresh, place, tabs } from './ui.js';
import { at } from './routes.js';

const DOING = { merge: 'Merging', rebase: 'Rebasing', 'cherry-pick': 'Cherry-picking', revert: 'Reverting', unmerged: 'A stash apply stopped', am: 'Applying patches' };
const CONCLUDE = { merge: 'Commit the merge', rebase: 'Continue the rebase', 'cherry-pick': 'Continue the cherry-pick', revert: 'Continue the revert' };
const CONTEXT = 3; // lines shown each side of a region

// conflictBanner is the changes screen's line that something is in
// progress, opening this screen; empty while nothing is.
export function conflictBanner(p) {
  const slot = h('div', { class: 'conflict-banner' });
  quiet('git.conflicts', { target: p.id }).then((c) => {
    if (!c || !c.op) return;
    const n = c.files.length + (c.hiddenSecrets || 0) + (c.hiddenLinked || 0);
    slot.replaceChildren(h('p', { class: 'note row' },
      h('span', { class: 'grow' }, `${headline(c)}: ${n} conflicted file${n === 1 ? '' : 's'}`),
      h('button', { type: 'button', class: 'primary', onclick: () => go((s) => conflicts(p, s), at.conflicts(p)) }, 'Resolve')));
  });
  return slot;
}

function headline(c) {
  return `${DOING[c.op] || 'In progress'}${c.title ? ` (${c.title})` : ''}`;
}

// shownOp is what the conflicts screen last showed in progress: once a
// stash apply's last file is resolved nothing is, and the note after it
// still says the stash was kept.
let shownOp = '';

export async function conflicts(p, st = {}) {
  place(at.conflicts(p));
  state.onChange = null;
  setTitle(p.name, true);
  const c = await run('git.conflicts', { target: p.id }).catch(() => null);
  if (!c) return;
  shownOp = c.op || '';
  if (!c.op) {
    return show(tabs(p, 'changes'), h('h2', {}, 'Conflicts'), h('p', { class: 'muted' }, 'Nothing is in progress in this checkout.'));
  }
  st.choices = st.choices || {};
  const files = h('div', { class: 'conflict-files' });
  const hidden = [];
  if (c.hiddenSecrets) hidden.push(`${c.hiddenSecrets} secret file${c.hiddenSecrets === 1 ? '' : 's'} in conflict, which only a device with Full access can see`);
  if (c.hiddenLinked) hidden.push(`${c.hiddenLinked} hard-linked file${c.hiddenLinked === 1 ? '' : 's'}, which must be resolved on the computer`);
  const finish = h('div', { class: 'row actions' },
    CONCLUDE[c.op] ? action(CONCLUDE[c.op], 'git.conclude', () => conclude(p, c)) : null,
    action('Abort', 'git.abort', () => abort(p, c)));
  show(tabs(p, 'changes'),
    h('h2', {}, headline(c)),
    h('p', { class: 'muted' }, `Ours is ${c.ours}; theirs is ${c.theirs}.`),
    hidden.length ? h('p', { class: 'note' }, `Also ${hidden.join(', and ')}.`) : null,
    c.files.length ? files : h('p', { class: 'muted' }, c.op === 'unmerged'
      ? 'Every file is resolved: the stash\'s changes are in your files, and the stash stays in the stash list.'
      : `Every file is resolved. ${CONCLUDE[c.op] ? `${CONCLUDE[c.op]} to finish.` : ''}`),
    c.truncated || c.next ? h('p', { class: 'muted' }, 'More files are in conflict than one screen lists; resolve these and look again.') : null,
    finish);
  for (const f of c.files) {
    const box = h('section', { class: 'conflict', 'aria-label': f.path }, h('h3', {}, f.path, ' ', h('span', { class: 'muted small' }, f.kind)));
    files.append(box);
    const d = await run('git.conflicts', { target: p.id, path: f.path }).catch(() => null);
    if (d) drawFile(p, box, d, st);
  }
}

function drawFile(p, box, d, st) {
  const key = `${d.path}\0${d.hash}`;
  const choices = st.choices[key] = st.choices[key] || [];
  const regions = (d.segments || []).filter((s) => s.conflict);
  const body = [];
  if (d.segments) {
    let i = 0;
    d.segments.forEach((s, n) => {
      if (!s.conflict) {
        body.push(context(s.text, n > 0, n < d.segments.length - 1));
        return;
      }
      body.push(region(s.conflict, i++, regions.length, choices, d, () => redraw()));
    });
  } else {
    body.push(h('p', { class: 'muted' }, WHOLE[d.whole] || 'This file is resolved whole.'));
  }
  const resolveChosen = action('Resolve with these choices', 'git.resolve', () => resolve(p, d, { regions: choices }),
    { class: 'primary', 'aria-label': `Resolve with these choices: ${d.path}` },
    regions.length && choices.filter(Boolean).length < regions.length
      ? `choose a side for ${regions.length === 1 ? 'the region' : `each of the ${regions.length} regions`} first` : '');
  const editor = h('div', { class: 'conflict-edit', hidden: true });
  const buttons = h('div', { class: 'row' },
    regions.length ? resolveChosen : null,
    action('Whole file: ours', 'git.resolve', () => resolve(p, d, { take: 'ours' }), { 'aria-label': `Whole file: ours, for ${d.path}` }),
    action('Whole file: theirs', 'git.resolve', () => resolve(p, d, { take: 'theirs' }), { 'aria-label': `Whole file: theirs, for ${d.path}` }),
    d.segments ? action('Edit the result', 'git.resolve', () => openEditor(p, d, editor, choices), { 'aria-label': `Edit the result: ${d.path}` }, fullReason('git.resolve')) : null,
    action('Mark resolved as it is', 'git.resolve', () => {
      // git still finds conflict markers in the file: committing it as it
      // is would keep them, so the person says so first.
      if (!d.markers) return resolve(p, d, { take: 'asIs' });
      const lines = `${d.markers} conflict marker line${d.markers === 1 ? '' : 's'}`;
      if (confirm(`${d.path} still has ${lines} (<<<<<<<, ======= or >>>>>>>). Mark it resolved with them in it?`)) return resolve(p, d, { take: 'asIs', keepMarkers: true });
      return note(`Not marked: ${d.path} still has ${lines}. Choose a side or edit them out first.`);
    }, { 'aria-label': `Mark resolved as it is: ${d.path}` }));
  function redraw() {
    box.replaceChildren(box.firstChild);
    drawFile(p, box, d, st);
  }
  box.append(...body, buttons, editor);
}

const WHOLE = {
  binary: 'A binary file: take our version or theirs.',
  'too large': 'Too large to show by regions here: take a side, or resolve it on the computer.',
  'too many regions': 'Too many regions to show one by one: take a side, or resolve it on the computer.',
  'not a file': 'Not a regular file (a link or a submodule): take a side.',
  'one side': 'One side deleted this file and the other changed it: take ours or theirs (the side that deleted it deletes it).',
};

// context shows the lines around regions: the last CONTEXT lines before
// one and the first CONTEXT after, the rest counted.
function context(text, after, before) {
  const lines = text.split(/(?<=\n)/);
  if (lines.length <= 2 * CONTEXT + 1) return h('pre', { class: 'ctx' }, text);
  const head = after ? lines.slice(0, CONTEXT).join('') : '';
  const tail = before ? lines.slice(-CONTEXT).join('') : '';
  const skipped = lines.length - (after ? CONTEXT : 0) - (before ? CONTEXT : 0);
  return h('div', {}, head ? h('pre', { class: 'ctx' }, head) : null,
    h('p', { class: 'muted small skipped' }, `${skipped} unchanged line${skipped === 1 ? '' : 's'}`),
    tail ? h('pre', { class: 'ctx' }, tail) : null);
}

function region(c, i, n, choices, d, redraw) {
  const pick = (what) => () => { choices[i] = what; redraw(); };
  const side = (label, text, cls) => h('div', { class: `side ${cls}` }, h('p', { class: 'small label' }, label),
    h('pre', {}, text === '' ? h('span', { class: 'muted' }, '(nothing)') : text));
  const seg = (what, label) => h('button', { type: 'button', 'aria-pressed': String(choices[i] === what), onclick: pick(what),
    'aria-label': `${label} for region ${i + 1} of ${d.path}` }, label);
  return h('fieldset', { class: 'region' },
    h('legend', {}, `Region ${i + 1} of ${n}`),
    side('Ours', c.ours, 'ours'),
    c.base !== '' ? side('Base', c.base, 'base') : null,
    side('Theirs', c.theirs, 'theirs'),
    h('div', { class: 'segmented', role: 'group', 'aria-label': `Choose for region ${i + 1}` },
      seg('ours', 'Take ours'), seg('theirs', 'Take theirs'), seg('both', 'Take both')));
}

// openEditor opens the whole result for editing, started from the choices
// made so far (ours where none is made yet).
function openEditor(p, d, editor, choices) {
  let i = 0;
  const text = d.segments.map((s) => {
    if (!s.conflict) return s.text;
    const c = s.conflict;
    const what = choices[i++] || 'ours';
    if (what === 'ours') return c.ours;
    if (what === 'theirs') return c.theirs;
    return c.ours + (c.ours && !c.ours.endsWith('\n') ? (d.crlf ? '\r\n' : '\n') : '') + c.theirs;
  }).join('');
  const id = `edit-${d.hash.slice(0, 12)}`;
  const area = h('textarea', { id, class: 'editor', spellcheck: 'false', rows: 12 });
  area.value = text;
  editor.hidden = false;
  const from = choices.some(Boolean) ? 'your choices so far, ours where none is made' : 'ours for every region';
  editor.replaceChildren(h('label', { for: id }, `The result for ${d.path}`),
    h('p', { class: 'muted small' }, `Started from ${from}. Edit it to what the file should be.`), area,
    h('div', { class: 'row' }, action('Save the result', 'git.resolve', () => resolve(p, d, { text: area.value }), { class: 'primary' })));
  area.focus();
}

async function resolve(p, d, how) {
  const op = shownOp; // the redraw below reads what is in progress now
  const res = await run('git.resolve', { target: p.id, path: d.path, hash: d.hash, ...how }).catch(() => null);
  if (!res) return;
  await refresh();
  // A stash apply has nothing to conclude: once nothing is in conflict it
  // is done, and git keeps the stash (a pop that stopped did not drop it).
  const stash = op === 'unmerged' && !res.remaining ? ' The stash you applied is still in the Stashes list: drop it there once you no longer need it.' : '';
  note(`Resolved ${d.path}. ${res.remaining ? `${res.remaining} file${res.remaining === 1 ? '' : 's'} still in conflict.` : 'No file is in conflict any more.'}${stash}`);
}

async function conclude(p, c) {
  const res = await once('git.conclude', { target: p.id, op: c.op, id: c.id }).catch(() => null);
  if (!res) return;
  await refresh();
  if (res.progress && res.progress.op) note(`${DOING[res.progress.op]} stopped again: ${res.conflicted} conflicted file${res.conflicted === 1 ? '' : 's'}.`);
  else note(`${c.op === 'merge' ? 'Committed the merge' : `Finished the ${c.op}`}: ${res.oid.slice(0, 8)}.`);
}

async function abort(p, c) {
  if (!confirm(`Abort? ${c.abortNote}`)) return;
  const res = await once('git.abort', { target: p.id, op: c.op, id: c.id }).catch(() => null);
  if (!res) return;
  await refresh();
  note(`Aborted the ${c.op === 'unmerged' ? 'stash apply' : c.op}.`);
}
