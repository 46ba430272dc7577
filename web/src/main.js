// The page a phone opens from gatehouse serve's QR code: pair, then the
// served checkouts. Each checkout has tabs: its changes (changes.js), its
// files and search (files.js), its history (history.js) and its worktrees
// (worktrees.js). What this device may not do is shown or explained from
// host.hello before the tap.
import { Host, Refusal, pair, parseLink, backoff } from './api.js';
import { b64encode, b64decode } from './seal.js';
import { h } from './dom.js';
import { $, state, run, setTitle, show, home, go, back, swap, note, clearNotes, refresh } from './ui.js';
import { changes } from './changes.js';
import { files, search } from './files.js';
import { historyOf } from './history.js';
import { worktrees } from './worktrees.js';
import { github, cloneScreen } from './github.js';

const storeKey = `gatehouse:${location.host}`;

function saved() {
  try {
    const s = JSON.parse(localStorage.getItem(storeKey) || 'null');
    return s && s.deviceId && s.key ? { deviceId: s.deviceId, key: b64decode(s.key) } : null;
  } catch {
    return null;
  }
}

let stopEvents = null;

function unpaired(message) {
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

async function start() {
  $('back').addEventListener('click', () => back());
  const link = parseLink(location.hash);
  let dev = saved();
  if (link) {
    dropLinkFromAddress(); // the key leaves the address bar
    if (!dev) {
      setTitle('Pairing', false);
      const showCode = (code) => show(h('div', { class: 'center' }, h('p', {}, 'Waiting for the computer to allow this device…'),
        h('p', {}, 'Pair code ', h('strong', { id: 'pair-code', class: 'paircode' }, code)),
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
  state.host = new Host(dev.deviceId, dev.key);
  try {
    state.hello = await state.host.call('host.hello', {});
  } catch (e) {
    if (e instanceof Refusal && (e.code === 'UNPAIRED' || e.code === 'ACCESS')) return unpaired();
    return unpaired(e.message);
  }
  listen();
  home(projects);
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
// checkout's screen that asked for it.
function listen() {
  stopEvents = state.host.events((ev) => {
    if (ev.name === 'checkout.changed' && state.onChange && ev.data && ev.data.target === state.watching) state.onChange();
  }, (why) => {
    if (why === 'unpaired') return unpaired('The computer unpaired this device.');
    if (why === 'ended') {
      // serve stopped; the pairing is kept on the computer, so the page
      // keeps its key and comes back when serve runs again.
      retry.stopped = true;
      note('gatehouse stopped serving on the computer. This page reconnects by itself when it serves again.');
    }
    if ((why !== 'lost' && why !== 'ended') || !state.host) return;
    const wait = backoff(retry.attempt++);
    $('live').textContent = '○ reconnecting';
    retry.timer = setTimeout(() => state.host && listen(), wait);
  }, () => {
    retry.attempt = 0;
    $('live').textContent = '● live';
    if (retry.stopped) {
      retry.stopped = false;
      clearNotes();
      refresh();
    }
  });
}

async function projects() {
  state.watching = null;
  state.onChange = null;
  setTitle('gatehouse', false);
  const res = await run('projects.list', {}).catch(() => null);
  if (!res) return;
  state.projects = res.projects;
  const items = res.projects.map((p) => h('li', {}, h('button', { type: 'button', class: 'item', onclick: () => go((s) => changes(p, s)) },
    h('strong', {}, p.name), ' ',
    p.kind === 'worktree' ? h('span', { class: 'badge' }, 'worktree') : null, ' ',
    h('span', { class: 'muted' }, p.branch ? `on ${p.branch}` : p.git ? '' : 'folder'))));
  show(h('h2', {}, 'Projects'), items.length ? h('ul', { class: 'list' }, items) : h('p', { class: 'muted' }, 'Nothing is served.'),
    state.hello.methods.includes('projects.clone') ? h('div', { class: 'row actions' }, h('button', { type: 'button', onclick: () => go((s) => cloneScreen(s)) }, 'Clone a repository')) : null,
    h('p', { class: 'muted' }, `This device has ${state.hello.access} access here.`));
}

// tabs are a checkout's screens; a tab replaces the screen in place.
export function tabs(p, active) {
  const list = [['changes', 'Changes', (s) => changes(p, s)], ['files', 'Files', (s) => files(p, '', s)], ['search', 'Search', (s) => search(p, s)]];
  if (p.git) list.push(['history', 'History', (s) => historyOf(p, '', s)], ['worktrees', 'Worktrees', (s) => worktrees(p, s)]);
  if (p.git && state.hello.methods.includes('github.pulls')) list.push(['github', 'GitHub', (s) => github(p, s)]);
  return h('nav', { class: 'tabs', 'aria-label': 'Checkout' }, list.map(([name, label, render]) =>
    h('button', { type: 'button', 'aria-current': active === name ? 'page' : false, onclick: () => swap(render) }, label)));
}

// project finds a served project by its target id (a worktree just made).
export async function project(id) {
  const res = await run('projects.list', {}).catch(() => null);
  if (res) state.projects = res.projects;
  return (state.projects || []).find((p) => p.id === id) || null;
}

start();
