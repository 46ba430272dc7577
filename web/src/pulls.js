// Pull requests end to end, beside github.js: opening one from the page
// (title, text, a base chosen from the repository's branches, draft),
// merging the way the repository allows (merge, squash, rebase), a large
// pull request's files a page at a time with one file's diff on a tap,
// and why a CI run failed (its failed jobs' last log lines). What this
// device may not do is explained before the tap, as everywhere else.
import { h } from './dom.js';
import { parseDiff, renderDiff } from './diff.js';
import { run, once, note, say, clearNotes, action, setTitle, show, swap, refresh, pages, pref } from './ui.js';

// options asks the host once per screen for the repository's branches
// (default first) and merge methods (pull.options).
const options = (p) => run('pull.options', { target: p.id }, 65_000).catch(() => null);

// pullNew is the form that opens a pull request from the checkout's
// current branch (pull.create pushes it first), then shows the new one in
// the form's place (view draws a pull request by number: github.js's, passed
// in so the modules import no cycle).
export async function pullNew(p, view) {
  setTitle('New pull request', true);
  const o = await options(p);
  if (!o) return;
  const title = h('input', { type: 'text', id: 'pr-title', name: 'title', required: true, maxlength: 256, autocomplete: 'off' });
  const body = h('textarea', { id: 'pr-body', name: 'body', rows: 6 });
  const base = h('select', { id: 'pr-base', name: 'base' }, o.branches.map((b) => h('option', { value: b, selected: b === o.defaultBranch },
    b === o.defaultBranch ? `${b} (default)` : b)));
  const draft = h('input', { type: 'checkbox', id: 'pr-draft', name: 'draft' });
  const submit = async () => {
    if (!title.value.trim()) return say('Give the pull request a title.');
    const res = await once('pull.create', { target: p.id, title: title.value.trim(), body: body.value || undefined,
      base: base.value, draft: draft.checked || undefined }, 185_000).catch(() => null);
    if (!res) return undefined;
    if (!res.number) return note(`Opened: ${res.url || 'on GitHub'}.`);
    await swap(() => view(res.number)); // back goes to the list, not to a form already sent
    return note(`Opened #${res.number}.`);
  };
  show(h('form', { class: 'pr-new', onsubmit: (e) => { e.preventDefault(); clearNotes(); submit(); } },
    h('p', { class: 'muted small' }, `Pushes the current branch, then opens a pull request on ${o.repo}.`),
    h('label', { for: 'pr-title' }, 'Title'), title,
    h('label', { for: 'pr-body' }, 'Description'), body,
    h('label', { for: 'pr-base' }, 'Into branch'), base,
    h('label', { class: 'check', for: 'pr-draft' }, draft, ' Open as a draft'),
    h('div', { class: 'row actions' }, action('Open pull request', 'pull.create', submit, { class: 'primary' }))));
  return undefined;
}

const VERB = { merge: 'Merge', squash: 'Squash and merge', rebase: 'Rebase and merge' };
const METHOD = { merge: 'Merge commit', squash: 'Squash', rebase: 'Rebase' };

// mergeBox is a pull request's merge: the methods the repository allows,
// the first chosen, a commit message for merge and squash left to
// GitHub's defaults unless written, and the button. failing(pr) reads the
// checks again just before asking.
export function mergeBox(p, pr, failing) {
  const box = h('div', { class: 'merge-box' }, h('p', { class: 'muted small' }, 'Asking GitHub how this repository merges…'));
  options(p).then((o) => {
    if (!o) return box.replaceChildren();
    if (!o.methods.length) return box.replaceChildren(h('p', { class: 'note' }, 'This repository allows no way to merge on GitHub (merge commit, squash or rebase).'));
    const method = h('select', { id: 'pr-method', name: 'method' }, o.methods.map((m) => h('option', { value: m }, METHOD[m])));
    const subject = h('input', { type: 'text', id: 'pr-subject', maxlength: 256, autocomplete: 'off', placeholder: `${pr.title} (#${pr.number})` });
    const message = h('textarea', { id: 'pr-message', rows: 3, placeholder: 'GitHub\'s default' });
    const custom = h('details', { class: 'merge-message' }, h('summary', {}, 'Commit message'),
      h('label', { for: 'pr-subject' }, 'Title'), subject, h('label', { for: 'pr-message' }, 'Message'), message);
    const btn = action(VERB[o.methods[0]], 'pull.merge', () => merge(p, pr, method.value, subject.value, message.value, failing), { class: 'primary', id: 'pr-merge' });
    method.addEventListener('change', () => {
      const b = box.querySelector('#pr-merge');
      if (b) b.textContent = VERB[method.value];
      custom.hidden = method.value === 'rebase';
    });
    box.replaceChildren(h('label', { for: 'pr-method' }, 'Merge method'), method, custom, h('div', { class: 'row actions' }, btn));
    return undefined;
  });
  return box;
}

async function merge(p, pr, method, subject, message, failing) {
  const number = pr.number;
  const fresh = await run('github.item', { target: p.id, kind: 'pull', number }, 65_000).catch(() => null);
  if (!fresh) return;
  const bad = failing(fresh.statusCheckRollup);
  const verb = VERB[method];
  const ask = bad.length
    ? `${verb} #${number} into ${pr.baseRefName} on GitHub although ${bad.length === 1 ? 'a check fails' : `${bad.length} checks fail`}: ${bad.join(', ')}?`
    : `${verb} #${number} into ${pr.baseRefName} on GitHub?`;
  if (!confirm(ask)) return;
  const params = { target: p.id, number, method };
  if (method !== 'rebase' && subject.trim()) params.subject = subject.trim();
  if (method !== 'rebase' && message.trim()) params.body = message;
  const res = await once('pull.merge', params, 125_000).catch(() => null);
  if (res) { await refresh(); note(`Merged #${number}.`); }
}

const SIGN = { added: 'added', deleted: 'deleted', renamed: 'renamed', copied: 'copied', binary: 'binary', modified: 'changed' };

// pullFiles lists a pull request's changed files a page at a time (more
// load as the list scrolls, or on Load more); a tap on a file loads that
// file's diff under it, and a second tap folds it.
export async function pullFiles(p, number, st) {
  setTitle(`#${number} files`, true);
  const head = h('h2', {}, 'Files changed');
  const hidden = h('div');
  const list = h('ul', { class: 'list pr-files', 'aria-label': 'Files changed' });
  show(head, hidden, list);
  await pages(list, st, async (offset) => {
    const res = await run('pull.files', { target: p.id, number, offset: offset || undefined }, 65_000).catch(() => null);
    if (!res) return null;
    head.textContent = `${res.total} file${res.total === 1 ? '' : 's'} changed`;
    if (res.hiddenSecrets) hidden.replaceChildren(h('p', { class: 'note' }, `${res.hiddenSecrets} file(s) left out: secret files are not shown to this device.`));
    return { items: res.files, next: res.next };
  }, (f) => fileRow(p, number, f), 'No files changed.');
}

function fileRow(p, number, f) {
  const out = h('div', { class: 'pr-file-diff' });
  const btn = h('button', { type: 'button', class: 'item pr-file', 'aria-expanded': 'false' },
    h('span', { class: 'path' }, f.oldPath ? `${f.oldPath} → ${f.path}` : f.path),
    h('span', { class: 'muted small' }, `${SIGN[f.status] || f.status} · +${f.added} −${f.deleted}`));
  btn.addEventListener('click', async () => {
    if (btn.getAttribute('aria-expanded') === 'true') {
      btn.setAttribute('aria-expanded', 'false');
      out.replaceChildren();
      return;
    }
    const res = await run('pull.file', { target: p.id, number, path: f.path }, 65_000).catch(() => null);
    if (!res) return;
    btn.setAttribute('aria-expanded', 'true');
    out.replaceChildren(renderDiff(parseDiff(res.diff), { wrap: pref('wrap', true) }),
      res.truncated ? h('p', { class: 'muted' }, 'This file\'s diff was cut short: it is too long to send to a phone.') : null);
  });
  return h('li', {}, btn, out);
}

// runLog is a failed run's why: each failed job, its failed step, and the
// last lines of its log, as plain text (the host took terminal control
// out and masked what looks like a secret's value).
export function runLog(p, id) {
  const box = h('section', { class: 'run-log', 'aria-labelledby': 'run-log-h' }, h('h3', { id: 'run-log-h' }, 'Why it failed'),
    h('p', { class: 'muted small' }, 'Reading the failed step\'s log…'));
  run('github.runLog', { target: p.id, id }, 65_000).catch(() => null).then((l) => {
    const parts = [box.firstChild];
    if (!l) return box.replaceChildren(...parts);
    if (!l.jobs.length) parts.push(h('p', { class: 'muted' }, 'No failed job has a log.'));
    for (const j of l.jobs) {
      parts.push(h('h4', {}, j.step ? `${j.name}: ${j.step}` : j.name),
        j.truncated ? h('p', { class: 'muted small' }, `The last ${j.lines.length} lines.`) : null,
        h('pre', { class: 'log', tabindex: '0', 'aria-label': `Log of ${j.name}` }, j.lines.join('\n')),
        j.masked ? h('p', { class: 'muted small' }, `${j.masked} line(s) had a value that looks like a secret: shown as ***.`) : null);
    }
    if (l.more) parts.push(h('p', { class: 'muted small' }, 'More jobs failed: see the run on GitHub.'));
    return box.replaceChildren(...parts.filter(Boolean));
  });
  return box;
}
