// The page a phone opens from gatehouse serve's QR code: pair, then the
// served checkouts, their status and diffs, staging and commits, files,
// search and an editor, each shown or explained from host.hello.
import { Host, Refusal, pair, parseLink } from './api.js';
import { b64encode, b64decode, newNonce } from './seal.js';
import { h } from './dom.js';

const $ = (id) => document.getElementById(id);
const storeKey = `gatehouse:${location.host}`;
const RANK = { view: 1, control: 2, full: 3 };

let host = null;
let hello = null;
let stopEvents = null;
const view = { stack: [] };

function note(text) {
  const n = h('p', { class: 'note' }, text);
  $('notes').replaceChildren(n);
}
function clearNotes() {
  $('notes').replaceChildren();
}

// allowed says whether this device may call method here, and if not why.
function allowed(method) {
  if (!hello) return { ok: false, why: '' };
  if (!hello.methods.includes(method)) return { ok: false, why: 'The computer does not offer this.' };
  const need = RANK[hello.methodAccess[method]] || 9;
  const have = RANK[hello.access] || 0;
  if (have < need) {
    return { ok: false, why: `Your access on this computer (${hello.access || 'none'}) does not allow this. The person at the computer can give this device ${hello.methodAccess[method]} access.` };
  }
  if (hello.fullAccessSwitch.includes(method) && !hello.features.includes('remoteFullAccess')) {
    return { ok: false, why: 'Turn on Full access for remote devices on the computer to use this.' };
  }
  return { ok: true, why: '' };
}

// run calls a method and shows a refusal as a note with the host's sentence.
async function run(method, params, timeout) {
  try {
    return await host.call(method, params, timeout);
  } catch (e) {
    if (e instanceof Refusal && e.code === 'UNPAIRED') return unpaired();
    note(e instanceof Refusal ? e.message : 'Something went wrong talking to the computer.');
    throw e;
  }
}

// once runs a change that must not happen twice under a sendId, sending it
// once more if the reply was lost (the host answers a repeat from memory).
async function once(method, params) {
  const p = { ...params };
  const dedupes = hello.features.includes('sendId');
  if (dedupes) p.sendId = newNonce();
  for (let attempt = 0; ; attempt++) {
    try {
      return await host.call(method, p, 90_000);
    } catch (e) {
      if (!(e instanceof Refusal) || e.code !== 'TIMEOUT') {
        if (e instanceof Refusal && e.code === 'UNPAIRED') return unpaired();
        note(e.message);
        throw e;
      }
      if (!dedupes || attempt === 1) {
        note('The computer did not confirm this, so it may have gone through. Check before trying again.');
        throw e;
      }
    }
  }
}

function setTitle(text, back) {
  $('title').textContent = text;
  $('back').hidden = !back;
}

function show(...els) {
  $('main').replaceChildren(...els.filter((e) => e !== null && e !== undefined && e !== false));
}

function saved() {
  try {
    const s = JSON.parse(localStorage.getItem(storeKey) || 'null');
    return s && s.deviceId && s.key ? { deviceId: s.deviceId, key: b64decode(s.key) } : null;
  } catch {
    return null;
  }
}

function unpaired(message) {
  localStorage.removeItem(storeKey);
  host = null;
  hello = null;
  if (stopEvents) stopEvents();
  setTitle('gatehouse', false);
  show(h('div', { class: 'center' }, h('p', {}, message || 'This device is not paired with the computer any more.'),
    h('p', { class: 'muted' }, 'Scan the code that gatehouse serve shows there to pair again.')));
  return new Promise(() => {});
}

async function start() {
  $('back').addEventListener('click', () => back());
  const link = parseLink(location.hash);
  let dev = saved();
  if (link) {
    history.replaceState(null, '', location.pathname); // the key leaves the address bar
    if (!dev) {
      setTitle('Pairing', false);
      const showCode = (code) => show(h('div', { class: 'center' }, h('p', {}, 'Waiting for the computer to allow this device…'),
        h('p', {}, 'Pair code ', h('strong', { id: 'pair-code', class: 'code' }, code)),
        h('p', { class: 'muted' }, 'The computer shows a code with the request: allow it there only if it is this one, with the access this device should have. A different code means someone else is asking.')));
      try {
        const p = await pair(link, deviceName(), showCode);
        localStorage.setItem(storeKey, JSON.stringify({ deviceId: p.deviceId, key: b64encode(p.key) }));
        dev = p;
      } catch (e) {
        return unpaired(e instanceof Refusal ? e.message : 'Pairing failed.');
      }
    }
  }
  if (!dev) return unpaired('This device is not paired with the computer.');
  host = new Host(dev.deviceId, dev.key);
  try {
    hello = await host.call('host.hello', {});
  } catch (e) {
    if (e instanceof Refusal && (e.code === 'UNPAIRED' || e.code === 'ACCESS')) return unpaired();
    return unpaired(e.message);
  }
  listen();
  projects();
}

function deviceName() {
  const ua = navigator.userAgent;
  const os = /iPhone/.test(ua) ? 'iPhone' : /iPad/.test(ua) ? 'iPad' : /Android/.test(ua) ? 'Android' : /Mac/.test(ua) ? 'Mac' : /Linux/.test(ua) ? 'Linux' : 'a device';
  const br = /Firefox/.test(ua) ? 'Firefox' : /Edg\//.test(ua) ? 'Edge' : /Chrome|Chromium/.test(ua) ? 'Chrome' : /Safari/.test(ua) ? 'Safari' : 'a browser';
  return `${br} on ${os}`;
}

// listen keeps the event stream open: checkout.changed refreshes the open
// checkout's status.
function listen() {
  stopEvents = host.events((ev) => {
    if (ev.name === 'checkout.changed' && view.onChange && ev.data && ev.data.target === view.target) view.onChange();
  }, (why) => {
    $('live').textContent = '';
    if (why === 'ended') unpaired('gatehouse stopped serving on the computer. Every pairing ended with it.');
    else if (why === 'unpaired') unpaired('The computer unpaired this device.');
    else if (why === 'lost') setTimeout(() => host && listen(), 3000);
  });
  $('live').textContent = '● live';
}

function go(render) {
  clearNotes();
  view.stack.push(render);
  render();
}
function back() {
  clearNotes();
  view.stack.pop();
  const top = view.stack[view.stack.length - 1];
  if (top) top();
}

async function projects() {
  view.stack = [projects];
  view.target = null;
  clearInterval(view.renew);
  view.onChange = null;
  setTitle('gatehouse', false);
  const res = await run('projects.list', {});
  if (!res) return;
  const items = res.projects.map((p) => h('li', {}, h('button', { class: 'item', onclick: () => go(() => checkout(p)) },
    h('strong', {}, p.name), ' ', h('span', { class: 'muted' }, p.branch ? `on ${p.branch}` : ''))));
  show(h('h2', {}, 'Projects'), items.length ? h('ul', { class: 'list' }, items) : h('p', { class: 'muted' }, 'Nothing is served.'),
    h('p', { class: 'muted' }, `This device has ${hello.access} access here.`));
}

function tabs(p, active) {
  const tab = (name, label, render) => h('button', { type: 'button', role: 'tab', 'aria-selected': String(active === name),
    onclick: () => { clearNotes(); view.stack[view.stack.length - 1] = render; render(); } }, label);
  return h('div', { class: 'tabs', role: 'tablist' },
    tab('changes', 'Changes', () => checkout(p)), tab('files', 'Files', () => files(p, '')), tab('search', 'Search', () => search(p)));
}

// subscribe asks for checkout.changed events for the open checkout, renewed
// before the host's 10 minutes run out.
function subscribe(id) {
  clearInterval(view.renew);
  const ask = () => host && host.call('subscribe', { targets: [id] }).catch(() => {});
  ask();
  view.renew = setInterval(ask, 9 * 60_000);
}

async function checkout(p) {
  if (view.target !== p.id) subscribe(p.id);
  view.target = p.id;
  setTitle(p.name, true);
  const render = async () => {
    const st = await run('git.status', { target: p.id }).catch(() => null);
    if (!st) return;
    if (view.target !== p.id) return;
    const staged = st.files.filter((f) => f.index !== '.' && f.index !== '?');
    const unstaged = st.files.filter((f) => f.worktree !== '.');
    const head = h('div', {},
      h('p', { class: 'row' }, h('strong', {}, st.branch || 'detached'),
        st.upstream ? h('span', { class: 'muted' }, `→ ${st.upstream}`) : null,
        st.ahead ? h('span', { class: 'badge' }, `↑${st.ahead}`) : null,
        st.behind ? h('span', { class: 'badge' }, `↓${st.behind}`) : null),
      h('div', { class: 'row' },
        action('Fetch', 'git.fetch', () => once('git.fetch', { target: p.id }).then(render)),
        action('Pull', 'git.pull', () => once('git.pull', { target: p.id }).then(render)),
        action('Push', 'git.push', () => once('git.push', { target: p.id }).then(render)),
        action('Switch branch', 'git.switchBranch', () => go(() => branches(p)))));
    const row = (f, isStaged) => h('li', {},
      h('button', { class: 'item', onclick: () => go(() => diff(p, f.path, isStaged)) },
        h('span', { class: 'badge' }, isStaged ? f.index : f.worktree), ' ', f.path),
      isStaged ? action('Unstage', 'git.stage', () => run('git.stage', { target: p.id, paths: [f.path], unstage: true }).then(render))
        : action('Stage', 'git.stage', () => run('git.stage', { target: p.id, paths: [f.path] }).then(render)),
      !isStaged && f.worktree !== '?' ? action('Discard', 'git.discard', () => {
        if (confirm(`Discard the changes to ${f.path}?`)) run('git.discard', { target: p.id, paths: [f.path] }).then(render);
      }) : null);
    const msg = h('textarea', { id: 'message', name: 'message', rows: 3 });
    const push = h('input', { type: 'checkbox', id: 'andpush' });
    const commit = allowed('git.commit');
    show(tabs(p, 'changes'), head,
      h('h2', {}, `Staged (${staged.length})`), h('ul', { class: 'list' }, staged.map((f) => row(f, true))),
      h('h2', {}, `Not staged (${unstaged.length})`), h('ul', { class: 'list' }, unstaged.map((f) => row(f, false))),
      unstaged.length ? h('div', { class: 'row' }, action('Stage all', 'git.stage', () => run('git.stage', { target: p.id, all: true }).then(render))) : null,
      commit.ok ? h('div', {}, h('label', { for: 'message' }, 'Commit message'), msg,
        h('div', { class: 'row' }, h('label', { for: 'andpush', class: 'row' }, push, 'and push'),
          h('button', { type: 'button', class: 'primary', disabled: !staged.length, onclick: async () => {
            clearNotes();
            if (!msg.value.trim()) return note('Write a commit message first.');
            const res = await once('git.commit', { target: p.id, message: msg.value, push: push.checked }).catch(() => null);
            if (res) { msg.value = ''; note(`Committed ${res.oid.slice(0, 8)}${res.pushed ? ' and pushed' : ''}.`); render(); }
          } }, 'Commit')))
        : h('p', { class: 'muted' }, commit.why));
  };
  view.onChange = render;
  await render();
}

// action is a button for a method, or its explanation when not allowed.
function action(label, method, onclick) {
  const a = allowed(method);
  if (!a.ok) return h('button', { type: 'button', disabled: true, title: a.why, 'aria-label': `${label}: ${a.why}` }, label);
  return h('button', { type: 'button', onclick: () => { clearNotes(); onclick(); } }, label);
}

async function diff(p, path, staged) {
  setTitle(path, true);
  view.onChange = null;
  const res = await run('git.diff', { target: p.id, path, staged }, 25_000).catch(() => null);
  if (!res) return;
  const lines = res.diff.split('\n').map((l) => h('span', {
    class: l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : l.startsWith('@@') ? 'hunk' : null,
  }, l + '\n'));
  show(h('h2', {}, staged ? 'Staged changes' : 'Changes'),
    res.hiddenSecrets ? h('p', { class: 'note' }, `${res.hiddenSecrets} file(s) left out: secret or hard-linked files are not shown to this device.`) : null,
    res.diff ? h('pre', { 'aria-label': `Diff of ${path}` }, lines) : h('p', { class: 'muted' }, 'No differences.'),
    res.truncated ? h('p', { class: 'muted' }, 'The diff was cut short.') : null);
}

async function branches(p) {
  setTitle('Switch branch', true);
  const res = await run('git.branches', { target: p.id }).catch(() => null);
  if (!res) return;
  show(h('ul', { class: 'list' }, res.local.map((b) => h('li', {},
    h('button', { class: 'item', disabled: b === res.current, onclick: async () => {
      if (await run('git.switchBranch', { target: p.id, branch: b }, 25_000).catch(() => null) !== undefined) back();
    } }, b, b === res.current ? ' (current)' : '')))));
}

async function files(p, dir) {
  view.onChange = null;
  setTitle(dir ? `${p.name}/${dir}` : p.name, true);
  const res = await run('files.list', { target: p.id, path: dir || undefined }).catch(() => null);
  if (!res) return;
  const up = dir ? h('li', {}, h('button', { class: 'item', onclick: () => files(p, dir.split('/').slice(0, -1).join('/')) }, '..')) : null;
  const items = res.entries.map((e) => {
    const path = dir ? `${dir}/${e.name}` : e.name;
    const open = e.kind === 'dir' ? () => files(p, path) : () => go(() => readFile(p, path));
    return h('li', {}, h('button', { class: 'item', onclick: open }, e.kind === 'dir' ? `${e.name}/` : e.name,
      e.secret ? h('span', { class: 'badge' }, 'secret') : null));
  });
  show(tabs(p, 'files'), h('ul', { class: 'list' }, up, items), res.next ? h('p', { class: 'muted' }, 'More files are not shown.') : null);
}

async function readFile(p, path) {
  view.onChange = null;
  const res = await run('files.read', { target: p.id, path }).catch(() => null);
  if (!res) { // refused: stay where the person was, with the note
    view.stack.pop();
    return;
  }
  setTitle(path, true);
  if (res.binary) return show(h('p', { class: 'muted' }, `A binary file of ${res.size} bytes.`));
  const edit = allowed('files.write');
  const text = h('pre', { 'aria-label': `Contents of ${path}` }, res.text);
  show(text, res.next ? h('p', { class: 'muted' }, 'Only the start of this file is shown.') : null,
    edit.ok && !res.next ? h('button', { type: 'button', onclick: () => editFile(p, path, res) }, 'Edit') : h('p', { class: 'muted' }, edit.why));
}

function editFile(p, path, res) {
  const area = h('textarea', { id: 'editor', class: 'editor', spellcheck: 'false' });
  area.value = res.text;
  show(h('label', { for: 'editor' }, `Editing ${path}`), area,
    h('div', { class: 'row' }, h('button', { type: 'button', class: 'primary', onclick: async () => {
      clearNotes();
      const out = await run('files.write', { target: p.id, path, text: area.value, baseHash: res.hash }).catch(() => null);
      if (out) { note('Saved.'); readFile(p, path); }
    } }, 'Save'), h('button', { type: 'button', onclick: () => readFile(p, path) }, 'Cancel')));
}

function search(p) {
  view.onChange = null;
  setTitle(p.name, true);
  const q = h('input', { type: 'search', id: 'query', name: 'query', autocomplete: 'off' });
  const results = h('div', {});
  const names = async () => {
    const res = await run('files.search', { target: p.id, query: q.value }, 25_000).catch(() => null);
    if (!res) return;
    results.replaceChildren(h('ul', { class: 'list' }, res.paths.map((path) =>
      h('li', {}, h('button', { class: 'item', onclick: () => go(() => readFile(p, path)) }, path)))),
    res.paths.length ? '' : h('p', { class: 'muted' }, 'No names match.'));
  };
  const grep = async () => {
    const res = await run('files.grep', { target: p.id, query: q.value }, 25_000).catch(() => null);
    if (!res) return;
    results.replaceChildren(h('ul', { class: 'list' }, res.matches.map((m) =>
      h('li', {}, h('button', { class: 'item', onclick: () => go(() => readFile(p, m.path)) },
        h('span', { class: 'muted' }, `${m.path}:${m.line}`), h('br'), m.text)))),
    res.matches.length ? '' : h('p', { class: 'muted' }, 'Nothing matches.'));
  };
  show(tabs(p, 'search'), h('label', { for: 'query' }, 'Search'), q,
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: names }, 'File names'), h('button', { type: 'button', onclick: grep }, 'Contents')),
    results);
}

start();
