// GitHub, through the computer's own gh: the project's pull requests
// (list, a pull request with its checks and reviews, its diff, review and
// merge), issues (list, an issue with comments, comment), CI runs, search,
// and cloning a repository to serve. What this device may not do is
// explained before the tap, as everywhere else.
import { h } from './dom.js';
import { state, run, once, quiet, note, say, clearNotes, button, action, allowed, setTitle, show, go, refresh, pages, ago, place, tabs, project } from './ui.js';
import { Refusal } from './api.js';
import { at } from './routes.js';
import { icon } from './icons.js';
import { changes } from './changes.js';
import { pullNew, mergeBox, pullFiles, runLog } from './pulls.js';

const KINDS = [['pulls', 'Pull requests'], ['issues', 'Issues'], ['runs', 'CI runs']];

const who = (a) => (a && (a.login || a.name)) || 'someone';

// github is a checkout's GitHub tab: one list at a time, and search.
export async function github(p, st = {}) {
  place(at.github(p));
  state.onChange = null;
  setTitle(p.name, true);
  st.kind = st.kind || 'pulls';
  st.state = st.state || 'open';
  // Without a GitHub remote nothing on this tab can work: say what to do
  // instead of showing lists, filters and a search that all fail.
  if (await noGitHubRemote(p, st)) return noRemote(p);
  const list = h('ul', { class: 'list', 'aria-label': KINDS.find((k) => k[0] === st.kind)[1] });
  const pick = h('nav', { class: 'tabs sub', 'aria-label': 'GitHub lists' }, KINDS.map(([k, label]) =>
    h('button', { type: 'button', 'aria-current': st.kind === k ? 'page' : false, onclick: () => { st.kind = k; st.pages = 1; refresh(); } }, label)));
  const stateSel = st.kind === 'runs' ? null : h('label', { class: 'inline', for: 'gh-state' }, 'Show ',
    h('select', { id: 'gh-state', onchange: (e) => { st.state = e.target.value; st.pages = 1; refresh(); } },
      ['open', 'closed', ...(st.kind === 'pulls' ? ['merged'] : []), 'all'].map((s) => h('option', { value: s, selected: st.state === s }, s))));
  const q = h('input', { type: 'search', id: 'gh-query', name: 'query', autocomplete: 'off', value: st.query || '' });
  const form = h('form', { role: 'search', onsubmit: (e) => { e.preventDefault(); go((s) => searchResults(p, q.value, s)); } },
    h('label', { for: 'gh-query' }, 'Search issues and pull requests'), q);
  const repo = h('p', { class: 'muted small' });
  const open = st.kind === 'pulls' ? h('div', { class: 'row' }, action('Open a pull request', 'pull.create', () => go(() => pullNew(p, (n) => pullView(p, n))))) : null;
  show(tabs(p, 'github'), repo, pick, open, stateSel, list, form);
  // The list's kind and state as drawn: a page that arrives after a tab
  // was tapped belongs to the list it was asked for, not the new one.
  const { kind, state: shown } = st;
  await pages(list, st, async (offset) => {
    const res = await run(`github.${kind}`, { target: p.id, state: kind === 'runs' ? undefined : shown, offset: offset || undefined }, 65_000).catch(() => null);
    if (res) repo.textContent = `On GitHub: ${res.repo}`;
    return res && { items: res.items, next: res.next };
  }, (it) => row(p, kind, it), kind === 'runs' ? 'No CI runs.' : `No ${shown === 'all' ? '' : `${shown} `}${kind === 'pulls' ? 'pull requests' : 'issues'}.`);
}

// noGitHubRemote asks the host once per visit of the tab whether the
// project has a GitHub repository (github.ErrNoRemote's sentence, "This
// project has no GitHub remote."); any other answer lets the tab draw,
// and the lists say their own refusal.
async function noGitHubRemote(p, st) {
  if (st.hasRemote) return false;
  try {
    await state.host.call('github.pulls', { target: p.id, state: 'open' }, 65_000);
  } catch (e) {
    if (e instanceof Refusal && /no GitHub remote/i.test(e.message)) return true;
    return false;
  }
  st.hasRemote = true;
  return false;
}

function noRemote(p) {
  show(tabs(p, 'github'), h('section', { class: 'explain', 'aria-labelledby': 'gh-none' },
    h('h2', { id: 'gh-none' }, 'This project has no GitHub remote'),
    h('p', {}, 'This tab shows the pull requests, issues and CI runs of the GitHub repository this checkout pushes to, through gh on the computer. None of this checkout\'s remotes is on GitHub.'),
    h('p', {}, 'To use it, at the computer, in this checkout:'),
    h('ol', { class: 'steps' },
      h('li', {}, 'Add the GitHub repository as a remote (OWNER/REPO is its name on GitHub):',
        h('pre', {}, h('code', {}, 'git remote add origin https://github.com/OWNER/REPO'))),
      h('li', {}, 'Sign gh in to GitHub, once on that computer:', h('pre', {}, h('code', {}, 'gh auth login')))),
    h('div', { class: 'row actions' }, h('button', { type: 'button', onclick: () => refresh() }, 'Check again'))));
}

// failing lists the checks of a pull request that did not pass, as
// "name (outcome)": a check run's conclusion or a status context's state.
const BAD = new Set(['failure', 'cancelled', 'timed_out', 'action_required', 'startup_failure', 'stale', 'error']);
function failing(checks) {
  return (checks || []).filter((c) => BAD.has((c.conclusion || c.state || '').toLowerCase()))
    .map((c) => `${c.name || c.context || 'check'} (${(c.conclusion || c.state).toLowerCase().replace(/_/g, ' ')})`);
}

function row(p, kind, it) {
  if (kind === 'runs') {
    return h('li', {}, h('button', { type: 'button', class: 'item commit-row', onclick: () => go(() => runView(p, it.databaseId)) },
      h('span', { class: 'subject' }, it.displayTitle || it.workflowName),
      h('span', { class: 'muted small' }, `${it.workflowName} · ${it.headBranch} · `, outcome(it), ` · ${ago(it.createdAt)}`)));
  }
  const item = kind === 'pulls' ? 'pull' : 'issue';
  return h('li', {}, h('button', { type: 'button', class: 'item commit-row', onclick: () => go(() => (item === 'pull' ? pullView(p, it.number) : issueView(p, it.number))) },
    h('span', { class: 'subject' }, `#${it.number} ${it.title}`),
    h('span', { class: 'muted small' }, `${it.state.toLowerCase()}${it.isDraft ? ' draft' : ''} · ${who(it.author)}${it.headRefName ? ` · ${it.headRefName} → ${it.baseRefName}` : ''} · ${ago(it.updatedAt)}`)));
}

// outcome is a run's or a check's state in words, with a symbol beside.
function outcome(x) {
  const c = (x.conclusion || '').toLowerCase();
  const s = (x.status || x.state || '').toLowerCase();
  const word = c || s || 'unknown';
  const sym = c === 'success' ? 'check' : c === 'failure' || c === 'cancelled' || c === 'timed_out' ? 'cross' : 'dot';
  return h('span', { class: `outcome ${c || s}` }, icon(sym), ' ', word.replace(/_/g, ' '));
}

function comments(list) {
  if (!list || !list.length) return h('p', { class: 'muted' }, 'No comments.');
  return h('ol', { class: 'comments', 'aria-label': 'Comments' }, list.map((c) => h('li', {},
    h('p', { class: 'muted small' }, `${who(c.author)} · ${ago(c.createdAt)}`), h('p', { class: 'message' }, c.body || ''))));
}

// commentForm posts a comment (github.comment, once) and redraws.
function commentForm(p, number) {
  const ok = allowed('github.comment');
  if (!ok.ok) return h('p', { class: 'muted' }, action('Comment', 'github.comment', () => {}));
  const area = h('textarea', { id: 'gh-comment', rows: 4 });
  return h('form', { class: 'comment-form', onsubmit: async (e) => {
    e.preventDefault();
    clearNotes();
    if (!area.value.trim()) return say('Write a comment first.');
    const res = await once('github.comment', { target: p.id, number, body: area.value }, 65_000).catch(() => null);
    if (res) { area.value = ''; await refresh(); note('Commented.'); }
  } }, h('label', { for: 'gh-comment' }, 'Comment'), area, h('button', { type: 'submit', class: 'primary' }, 'Comment'));
}

async function issueView(p, number) {
  setTitle(`#${number}`, true);
  const it = await run('github.item', { target: p.id, kind: 'issue', number }, 65_000).catch(() => null);
  if (!it) return;
  show(h('article', {}, h('h2', {}, it.title),
    h('p', { class: 'muted small' }, `${it.state.toLowerCase()} · ${who(it.author)} · ${ago(it.createdAt)}`),
    it.body ? h('p', { class: 'message' }, it.body) : null,
    h('h3', {}, 'Comments'), comments(it.comments), commentForm(p, number)));
}

export async function pullView(p, number) {
  setTitle(`#${number}`, true);
  const pr = await run('github.item', { target: p.id, kind: 'pull', number }, 65_000).catch(() => null);
  if (!pr) return;
  const checks = pr.statusCheckRollup || [];
  const bad = failing(checks);
  const reviews = pr.reviews || [];
  const open = pr.state === 'OPEN';
  const reviewBox = h('textarea', { id: 'gh-review', rows: 3 });
  const review = (event) => async () => {
    if (event !== 'approve' && !reviewBox.value.trim()) return say('Write what should change, or your comment, first.');
    const res = await once('pull.review', { target: p.id, number, event, body: reviewBox.value || undefined }, 65_000).catch(() => null);
    if (res) { reviewBox.value = ''; await refresh(); note(event === 'approve' ? 'Approved.' : event === 'comment' ? 'Review comment sent.' : 'Changes requested.'); }
  };
  show(h('article', {}, h('h2', {}, `${pr.title}`),
    h('p', { class: 'muted small' }, `${pr.state.toLowerCase()}${pr.isDraft ? ' draft' : ''} · ${who(pr.author)} · ${pr.headRefName} → ${pr.baseRefName}`),
    pr.reviewDecision ? h('p', {}, 'Review: ', h('strong', {}, pr.reviewDecision.replace(/_/g, ' ').toLowerCase())) : null,
    pr.body ? h('p', { class: 'message' }, pr.body) : null,
    h('h3', {}, `Checks (${checks.length})`),
    checks.length ? h('ul', { class: 'list checks', 'aria-label': 'Checks' }, checks.map((c) => h('li', {}, h('span', { class: 'item' }, c.name || c.context || 'check', ' ', outcome(c)), whyButton(p, c))))
      : h('p', { class: 'muted' }, 'No checks.'),
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: () => go((st) => pullFiles(p, number, st)) }, 'Files changed')),
    h('h3', {}, `Reviews (${reviews.length})`),
    reviews.length ? h('ol', { class: 'comments', 'aria-label': 'Reviews' }, reviews.map((r) => h('li', {},
      h('p', { class: 'muted small' }, `${who(r.author)} · ${(r.state || '').replace(/_/g, ' ').toLowerCase()}`), r.body ? h('p', { class: 'message' }, r.body) : null))) : null,
    open ? h('div', { class: 'review' }, h('label', { for: 'gh-review' }, 'Review'), reviewBox,
      h('div', { class: 'row' }, action('Approve', 'pull.review', review('approve')), action('Request changes', 'pull.review', review('request-changes')),
        action('Comment', 'pull.review', review('comment')))) : null,
    open && bad.length ? h('p', { class: 'note warn' }, `${bad.length === 1 ? 'A check does not pass' : `${bad.length} checks do not pass`}: ${bad.join(', ')}.`) : null,
    open ? mergeBox(p, { ...pr, number }, failing) : null,
    h('h3', {}, 'Comments'), comments(pr.comments), open ? commentForm(p, number) : null));
}

// whyButton leads from a failed check to its run's log, when the check
// names a GitHub Actions run (its details address holds the run's number;
// the host checks the number again).
function whyButton(p, c) {
  const m = /\/actions\/runs\/([0-9]{1,18})(?:[/?#]|$)/.exec(c.detailsUrl || '');
  if (!m || !BAD.has((c.conclusion || '').toLowerCase())) return null;
  const name = c.name || 'check';
  return h('button', { type: 'button', 'aria-label': `Why ${name} failed`, onclick: () => go(() => runView(p, Number(m[1]))) }, 'Why');
}

async function runView(p, id) {
  setTitle(`Run ${id}`, true);
  const r = await run('github.item', { target: p.id, kind: 'run', number: id }, 65_000).catch(() => null);
  if (!r) return;
  const jobs = r.jobs || [];
  show(h('article', {}, h('h2', {}, r.displayTitle || r.workflowName),
    h('p', { class: 'muted small' }, `${r.workflowName} · ${r.event} · ${r.headBranch} · `, outcome(r)),
    h('h3', {}, `Jobs (${jobs.length})`),
    h('ul', { class: 'list', 'aria-label': 'Jobs' }, jobs.map((j) => h('li', {}, h('span', { class: 'item' }, j.name, ' ', outcome(j))))),
    jobs.some((j) => BAD.has((j.conclusion || '').toLowerCase())) ? runLog(p, id) : null));
}

async function searchResults(p, query, st) {
  setTitle('Search', true);
  const list = h('ul', { class: 'list', 'aria-label': 'Found on GitHub' });
  const dropped = h('div');
  let left = 0;
  show(h('h2', {}, 'Found: ', h('q', {}, query)), dropped, list);
  await pages(list, st, async (offset) => {
    const res = await run('github.search', { target: p.id, query, offset: offset || undefined }, 65_000).catch(() => null);
    if (res && res.dropped) {
      left += res.dropped;
      dropped.replaceChildren(h('p', { class: 'note' }, `${left} result(s) from other repositories left out: this searches ${res.repo} only.`));
    }
    return res && { items: res.items, next: res.next };
  }, (it) => h('li', {}, h('button', { type: 'button', class: 'item commit-row', onclick: () => go(() => (it.isPullRequest ? pullView(p, it.number) : issueView(p, it.number))) },
    h('span', { class: 'subject' }, `${it.isPullRequest ? 'Pull request' : 'Issue'} #${it.number} ${it.title}`),
    h('span', { class: 'muted small' }, `${it.state.toLowerCase()} · ${who(it.author)}`))), 'Nothing found.');
}

// cloneScreen lists the account's repositories and clones one (or any
// owner/name typed in), then opens it once the computer has it.
export async function cloneScreen(st = {}) {
  place(at.clone());
  setTitle('Clone a repository', true);
  const may = allowed('projects.clone');
  const input = h('input', { type: 'text', id: 'clone-repo', autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', placeholder: 'owner/name' });
  const status = h('p', { 'aria-live': 'polite', class: 'muted' });
  const start = async (repo) => {
    clearNotes();
    if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) return say('Name a GitHub repository as owner/name.');
    const job = await once('projects.clone', { repo }, 35_000).catch(() => null);
    if (!job) return;
    status.textContent = `Cloning ${repo}…`;
    for (let wait = 500; ; wait = Math.min(wait * 2, 4000)) {
      await new Promise((r) => setTimeout(r, wait));
      const s = await quiet('projects.cloneStatus', { id: job.id });
      if (!s || s.state === 'running') continue;
      if (s.state === 'failed') { status.textContent = ''; return note(s.error || 'The clone failed.'); }
      status.textContent = `Cloned ${repo}.`;
      const proj = await project(s.target);
      if (proj) go((x) => changes(proj, x), at.changes(proj));
      return;
    }
  };
  const list = h('ul', { class: 'list', 'aria-label': 'Your repositories' });
  show(may.ok ? null : h('p', { class: 'note', id: 'clone-why' }, may.why),
    h('form', { onsubmit: (e) => { e.preventDefault(); start(input.value.trim()); } },
      h('label', { for: 'clone-repo' }, 'Repository'), input,
      h('div', { class: 'row' }, action('Clone', 'projects.clone', () => start(input.value.trim())))),
    status, h('h2', {}, 'Your repositories'), list);
  await pages(list, st, async (offset) => {
    const res = await run('github.repos', { offset: offset || undefined }, 65_000).catch(() => null);
    return res && { items: res.items, next: res.next };
  }, (r) => h('li', {}, h('span', { class: 'item' }, h('strong', {}, r.nameWithOwner), r.isPrivate ? ' (private)' : '',
    r.description ? [h('br'), h('span', { class: 'muted small' }, r.description)] : null),
  // One reason for every row: the note above says it once.
  h('button', { type: 'button', 'aria-label': `Clone ${r.nameWithOwner}`, disabled: !may.ok, 'aria-disabled': may.ok ? false : 'true',
    'aria-describedby': may.ok ? false : 'clone-why', onclick: () => start(r.nameWithOwner) }, 'Clone')), 'No repositories.');
}
