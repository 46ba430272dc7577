// The page a phone opens from gatehouse serve's QR code: pair, then the
// served checkouts. Each checkout has tabs: its changes (changes.js), its
// files and search (files.js), its history (history.js) and its worktrees
// (worktrees.js). What this device may not do is shown or explained from
// host.hello before the tap.
import { Host, Refusal, pair, reconnect, parseLink, backoff } from './api.js';
import { b64encode, b64decode } from './seal.js';
import { h } from './dom.js';
import { $, state, run, setTitle, show, go, back, note, clearNotes, refresh, routes, place, project, home } from './ui.js';
import { at, parse } from './routes.js';
import { icon } from './icons.js';
import { changes } from './changes.js';
import { files, search, readFile } from './files.js';
import { historyOf, commitView } from './history.js';
import { worktrees } from './worktrees.js';
import { conflicts } from './conflicts.js';
import { github, cloneScreen } from './github.js';
import { stashes } from './stash.js';
import { branchesScreen, tagsScreen } from './branches.js';
import { blameView, diffAll } from './blame.js';
import { others, other, keep, forget, addComputer } from './computers.js';

// What this page keeps in the browser's storage: its device id and stored
// secret, and nothing else (api.js says why that is safe to keep).
const storeKey = `gatehouse:${location.host}`;

function saved() {
  try {
    const s = JSON.parse(localStorage.getItem(storeKey) || 'null');
    return s && s.v === 2 && s.deviceId && s.stored ? { deviceId: s.deviceId, stored: b64decode(s.stored) } : null;
  } catch {
    return null;
  }
}

function save(dev) {
  localStorage.setItem(storeKey, JSON.stringify({ v: 2, deviceId: dev.deviceId, stored: b64encode(dev.stored) }));
}

let stopEvents = null;

// The computers this page has a session with: 0 is the one that served it,
// others are numbered as computers.js keeps them. state.computer is the one
// the screens and events are of.
const hosts = new Map();
state.computer = 0;

// storeOf keeps computer n's pairing: this origin's own record, or its
// record among the other computers.
function storeOf(n, dev) {
  if (n === 0) return { load: saved, save };
  return { load: () => other(n), save: (d) => keep(n, dev.base, dev.name, d) };
}

// use makes computer n the one the screens are of, opening a session with
// it the first time (which may ask the person there to allow this device
// again). It returns why it could not, or ''.
async function use(n) {
  if (n === state.computer && state.host) return '';
  let entry = hosts.get(n);
  if (!entry) {
    const dev = n === 0 ? saved() : other(n);
    if (!dev) return 'This page is not paired with that computer.';
    try {
      const host = await connect(dev, storeOf(n, dev));
      entry = { host, hello: await host.call('host.hello', {}) };
      hosts.set(n, entry);
    } catch (e) {
      if (n !== 0 && e instanceof Refusal && (e.code === 'UNPAIRED' || e.code === 'MOVED')) forget(n);
      return e instanceof Refusal ? e.message : `${dev.name || 'That computer'} could not be reached. Check that gatehouse serve runs there and that this device can reach ${dev.base || 'it'}.`;
    }
  }
  const was = hosts.get(state.computer);
  if (was && was.host === state.host) was.hello = state.hello;
  if (stopEvents) stopEvents();
  clearTimeout(retry.timer);
  state.computer = n;
  state.host = entry.host;
  state.hello = entry.hello;
  state.projects = null;
  listen();
  return '';
}

// switchTo opens computer n's projects.
async function switchTo(n) {
  const why = await use(n);
  await home(projects);
  if (why) note(why);
}

// pairWith pairs this page with another computer through its link and
// opens it.
async function pairWith(link, n, name) {
  let dev;
  try {
    dev = await pair(link, deviceName(), waiting('Pairing', `Waiting for ${name} to allow this device…`,
      'That computer shows a code with the request: allow it there only if it is this one, with the access this device should have. A different code means someone else is asking.'));
  } catch (e) {
    addComputer(pairWith);
    return note(e instanceof Refusal ? e.message : `${name} could not be reached. Check that gatehouse serve runs there and that this device can reach ${link.base}.`);
  }
  keep(n, link.base, name, dev);
  hosts.delete(n);
  return switchTo(n);
}

function unpaired(message) {
  if (state.computer !== 0) {
    // Another computer forgot this device: it leaves this page's list, and
    // the page goes back to the computer that served it.
    const n = state.computer;
    forget(n);
    hosts.delete(n);
    state.host = null;
    use(0).then(() => home(projects)).then(() => note(message || 'That computer does not know this device any more, so it was taken off this page.'));
    return new Promise(() => {});
  }
  localStorage.removeItem(storeKey);
  state.host = null;
  state.hello = null;
  if (stopEvents) stopEvents();
  clearTimeout(retry.timer);
  setTitle('gatehouse', false);
  $('live').textContent = '';
  show(h('div', { class: 'center' }, h('p', {}, message || 'This device is not paired with the computer any more.'),
    h('p', { class: 'muted' }, 'Scan the code that gatehouse serve shows there to pair again.')));
  return new Promise(() => {});
}
state.unpaired = unpaired;

// waiting shows the code the person compares at the computer.
function waiting(title, lead, explain) {
  return (code) => {
    setTitle(title, false);
    show(h('div', { class: 'center' }, h('p', {}, lead),
      h('p', {}, 'Pair code ', h('strong', { id: 'pair-code', class: 'paircode' }, code)),
      h('p', { class: 'muted' }, explain)));
  };
}

// connect opens a session for dev; after a restart of serve that cost this
// page its ticket, it asks the person at the computer to allow it again.
async function connect(dev, store = { load: saved, save }) {
  let why = 'gatehouse restarted on the computer since this page last reached it, so the computer must allow this device again.';
  const host = new Host(dev, { onStored: (stored) => store.save({ deviceId: dev.deviceId, stored }), load: store.load });
  try {
    await host.open();
    return host;
  } catch (e) {
    if (!(e instanceof Refusal) || e.code !== 'RESTARTED') throw e;
    // Another computer says why in its own words (a reload, for a page it
    // paired from another computer's address).
    if (dev.base) why = `${dev.name || dev.base}: ${e.message}`;
  }
  const again = await reconnect(dev, deviceName(), waiting('Reconnecting', why,
    'The computer shows a code with the request: allow it there only if it is this one (gatehouse devices allow CODE). This device keeps the access it had. A different code means someone else is asking.'));
  store.save(again);
  return connect({ ...dev, ...again }, store);
}

// unreachable says why the computer could not be used now, keeping the
// pairing, with a way to try again.
function unreachable(message) {
  state.host = null;
  setTitle('gatehouse', false);
  $('live').textContent = '';
  show(h('div', { class: 'center' }, h('p', {}, message),
    h('div', { class: 'row actions' }, h('button', { type: 'button', onclick: () => location.reload() }, 'Try again'))));
}

// askAgain is for a page whose ticket the computer no longer knows: it
// keeps its pairing and asks the person at the computer again, on a tap.
function askAgain() {
  state.host = null;
  if (stopEvents) stopEvents();
  $('live').textContent = '';
  show(h('div', { class: 'center' }, h('p', {}, 'gatehouse restarted on the computer and no longer knows this page.'),
    h('div', { class: 'row actions' }, h('button', { type: 'button', onclick: () => location.reload() }, 'Ask the computer to allow it again'))));
}

async function start() {
  $('back').replaceChildren(icon('back'));
  $('back').addEventListener('click', () => back());
  const link = parseLink(location.hash);
  let dev = saved();
  if (link) {
    dropLinkFromAddress(); // the key leaves the address bar
    if (!dev) {
      try {
        dev = await pair(link, deviceName(), waiting('Pairing', 'Waiting for the computer to allow this device…',
          'The computer shows a code with the request: allow it there only if it is this one, with the access this device should have. A different code means someone else is asking.'));
        save(dev);
      } catch (e) {
        return unpaired(e instanceof Refusal ? e.message : 'Pairing failed.');
      }
    }
  }
  if (!dev) return unpaired('This device is not paired with the computer.');
  try {
    state.host = await connect(dev);
    state.hello = await state.host.call('host.hello', {});
    hosts.set(0, { host: state.host, hello: state.hello });
  } catch (e) {
    // Only the computer's word that it does not know this device ends the
    // pairing here; anything else (no answer, busy, another program at the
    // address) leaves it for the next try.
    if (e instanceof Refusal && (e.code === 'UNPAIRED' || e.code === 'ACCESS' || e.code === 'MOVED')) return unpaired(e.code === 'MOVED' ? e.message : undefined);
    return unreachable(e instanceof Refusal ? e.message : 'The computer could not be reached.');
  }
  listen();
  routes(projects, resolve);
}

// resolve gives the screen a route names (routes.js), drawn once the
// project it names is found among those served.
function resolve(route) {
  const r = parse(route);
  if (!r) return null;
  if (r.screen === 'clone') return (s) => cloneScreen(s);
  if (r.screen === 'computer') {
    return async (s) => {
      const why = await use(r.computer);
      await projects(s);
      if (why) note(why);
    };
  }
  const draw = {
    changes: (p, s) => changes(p, s),
    files: (p, s) => files(p, r.path, s),
    file: (p) => readFile(p, r.path, r.line),
    search: (p, s) => search(p, s),
    history: (p, s) => historyOf(p, r.path, s),
    commit: (p) => commitView(p, r.path),
    worktrees: (p, s) => worktrees(p, s),
    conflicts: (p, s) => conflicts(p, s),
    github: (p, s) => github(p, s),
    stashes: (p, s) => stashes(p, s),
    branches: (p, s) => branchesScreen(p, s),
    tags: (p, s) => tagsScreen(p, s),
    blame: (p, s) => blameView(p, r.path, s),
    diff: (p, s) => diffAll(p, s),
  }[r.screen];
  return async (s) => {
    setTitle('gatehouse', true);
    const why = await use(r.computer);
    if (why) return show(h('p', { class: 'muted' }, why));
    const found = (state.projects || []).find((x) => x.id === r.id) || await project(r.id);
    if (!found) return show(h('p', { class: 'muted' }, 'This project is not served here any more.'));
    const p = { ...found, computer: state.computer };
    return draw(p, s);
  };
}

function dropLinkFromAddress() {
  window.history.replaceState(null, '', location.pathname);
}

function deviceName() {
  const ua = navigator.userAgent;
  const os = /iPhone/.test(ua) ? 'iPhone' : /iPad/.test(ua) ? 'iPad' : /Android/.test(ua) ? 'Android' : /Mac/.test(ua) ? 'Mac' : /Linux/.test(ua) ? 'Linux' : 'a device';
  const br = /Firefox/.test(ua) ? 'Firefox' : /Edg\//.test(ua) ? 'Edge' : /Chrome|Chromium/.test(ua) ? 'Chrome' : /Safari/.test(ua) ? 'Safari' : 'a browser';
  return `${br} on ${os} (${deviceTag()})`;
}

// deviceTag tells this browser from another of the same kind in the
// computer's device list; it stays when a pairing ends, so pairing again
// replaces the old entry there instead of adding one.
function deviceTag() {
  try {
    let tag = localStorage.getItem('gatehouse-device-tag');
    if (!tag) {
      tag = Array.from(crypto.getRandomValues(new Uint8Array(2)), (b) => b.toString(16).padStart(2, '0')).join('');
      localStorage.setItem('gatehouse-device-tag', tag);
    }
    return tag;
  } catch {
    return 'private';
  }
}

// retry is the event stream's reconnection (backoff in api.js); a stream
// that opened resets it.
const retry = { attempt: 0, timer: 0 };

// listen keeps the event stream open: checkout.changed refreshes the open
// checkout's screen that asked for it. Each reopening opens the session
// again first (with the ticket this page holds): serve may have restarted.
function listen() {
  const host = state.host;
  if (!host) return;
  const lost = (why) => {
    if (why === 'unpaired') return unpaired('The computer unpaired this device.');
    if (why === 'ended') {
      // serve stopped; the pairing is kept on the computer, and this page
      // holds a ticket in memory, so it comes back when serve runs again.
      retry.stopped = true;
      note('gatehouse stopped serving on the computer. This page reconnects by itself when it serves again.');
    }
    if ((why !== 'lost' && why !== 'ended') || state.host !== host) return;
    const wait = backoff(retry.attempt++);
    $('live').replaceChildren(icon('ring'), ' reconnecting');
    retry.timer = setTimeout(() => reopen(host), wait);
  };
  stopEvents = host.events((ev) => {
    if (ev.name === 'checkout.changed' && state.onChange && ev.data && ev.data.target === state.watching) state.onChange();
  }, lost, () => {
    retry.attempt = 0;
    $('live').replaceChildren(icon('dot'), ' live');
    if (retry.stopped) {
      retry.stopped = false;
      clearNotes();
      refresh();
    }
  });
}

// reopen opens the session again and then the event stream; a computer
// that forgot this device unpairs the page, one that cannot be reached yet
// is tried again later.
async function reopen(host) {
  if (state.host !== host) return;
  try {
    await host.open();
  } catch (e) {
    if (e instanceof Refusal && (e.code === 'UNPAIRED' || e.code === 'MOVED')) return unpaired(e.message);
    if (e instanceof Refusal && e.code === 'NOT_THE_COMPUTER') return unreachable(e.message);
    if (e instanceof Refusal && e.code === 'RESTARTED') return askAgain();
    const wait = backoff(retry.attempt++);
    retry.timer = setTimeout(() => reopen(host), wait);
    return;
  }
  listen();
}

async function projects() {
  place(at.computer(state.computer));
  state.watching = null;
  state.onChange = null;
  setTitle('gatehouse', false);
  const res = await run('projects.list', {}).catch(() => null);
  if (!res) return;
  const computer = state.computer;
  state.projects = res.projects.map((p) => ({ ...p, computer }));
  const items = state.projects.map((p) => h('li', {}, h('button', { type: 'button', class: 'item', onclick: () => go((s) => changes(p, s), at.changes(p)) },
    h('strong', {}, p.name), ' ',
    p.kind === 'worktree' ? h('span', { class: 'badge' }, 'worktree') : null, ' ',
    h('span', { class: 'muted' }, p.branch ? `on ${p.branch}` : p.git ? '' : 'folder'))));
  const list = others();
  const here = computer === 0 ? location.host : (list.find((c) => c.n === computer) || { name: 'another computer' }).name;
  show(list.length ? h('h2', {}, `Projects on ${here}`) : h('h2', {}, 'Projects'), items.length ? h('ul', { class: 'list' }, items) : h('p', { class: 'muted' }, 'Nothing is served.'),
    state.hello.methods.includes('projects.clone') ? h('div', { class: 'row actions' }, h('button', { type: 'button', onclick: () => go((s) => cloneScreen(s), at.clone()) }, 'Clone a repository')) : null,
    h('p', { class: 'muted' }, `This device has ${state.hello.access} access here.`),
    computersSection(list, computer));
}

// forgetComputer takes computer c off this page (its pairing there stays
// until the person there revokes it: gatehouse devices revoke).
async function forgetComputer(c) {
  if (!confirm(`Forget ${c.name} on this page? It stays paired there until you revoke it with gatehouse devices revoke.`)) return;
  hosts.delete(c.n);
  forget(c.n);
  if (state.computer === c.n) {
    state.host = null;
    await use(0);
  }
  await home(projects);
  note(`${c.name} was taken off this page.`);
}

// computersSection lists the computers this page is paired with, to switch
// between them, and adds another.
function computersSection(list, current) {
  const all = [{ n: 0, name: location.host, note: 'served this page' }, ...list];
  return h('section', { 'aria-labelledby': 'computers-h' }, h('h2', { id: 'computers-h' }, 'Computers'),
    list.length ? h('ul', { class: 'list computers' }, all.map((c) => h('li', {}, h('button', {
      type: 'button', class: 'item', 'aria-current': c.n === current ? 'true' : false, onclick: () => switchTo(c.n),
    }, h('strong', {}, c.name), ' ', c.n === current ? h('span', { class: 'badge' }, 'open') : null, ' ', c.note ? h('span', { class: 'muted' }, c.note) : null),
    c.n ? h('button', { type: 'button', 'aria-label': `Forget ${c.name}`, onclick: () => forgetComputer(c) }, 'Forget') : null))) : null,
    h('div', { class: 'row actions' }, h('button', { type: 'button', id: 'add-computer', onclick: () => go(() => addComputer(pairWith)) }, 'Add a computer')));
}

start();
