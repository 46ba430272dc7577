// What every screen shares: the paired host and its hello, notes, the
// calls that show a refusal as the host's sentence, buttons that explain
// what this device may not do, the navigation stack that keeps each
// screen's place, and lists that page as they scroll.
import { h } from './dom.js';
import { Refusal } from './api.js';
import { newNonce } from './seal.js';
import { icon } from './icons.js';
import { at } from './routes.js';

export const $ = (id) => document.getElementById(id);
export const state = { host: null, hello: null, unpaired: () => new Promise(() => {}) };
const RANK = { view: 1, control: 2, full: 3 };

// note says something to the person: a confirmation ("Committed
// 1a2b3c4d."), a refusal's sentence, a reason. It stays until the person
// taps again (guarded, or a screen's own clearNotes) or opens another
// screen; drawing the same screen again (refresh) keeps it.
export function note(text) {
  $('notes').replaceChildren(h('p', { class: 'note' }, text));
}
export function clearNotes() {
  $('notes').replaceChildren();
  dropSaid();
}

// say tells the person why what they just tapped did not happen, beside
// the control they tapped (role=alert, so a screen reader says it at once),
// not at the top of the page far from it: the top is for what concerns the
// whole page. With no tapped control still on the screen (a tab that drew
// a new screen, a live refresh) it is a note at the top.
let tapped = null;
let said = null;
document.addEventListener('click', (e) => { tapped = e.target.closest ? e.target.closest('button') : null; }, true);
document.addEventListener('submit', (e) => { tapped = e.submitter || e.target; }, true);

export function say(text) {
  const at = tapped && tapped.isConnected && tapped.closest('main') ? tapped : null;
  if (!at) return note(text);
  dropSaid();
  said = h('span', { class: 'note said', role: 'alert' }, text);
  at.after(said);
  if (at.parentElement) at.parentElement.classList.add('has-said');
  return undefined;
}

function dropSaid() {
  if (!said) return;
  if (said.parentElement) said.parentElement.classList.remove('has-said');
  said.remove();
  said = null;
}

// keepSaid moves what say put beside a control to the top when a redraw
// of the screen took the control away, so it is not lost unread.
function keepSaid() {
  if (!said || said.isConnected) return;
  const text = said.textContent;
  said = null;
  note(text);
}

// fullAccess says whether this device sees secret files (full grant).
export function fullAccess() {
  return state.hello && state.hello.access === 'full';
}

// SECRET_WHY is said beside a secret file to a device below full, before
// any tap the host would refuse.
export const SECRET_WHY = 'Secret file: only a device with Full access on the computer can open, stage or discard it.';

// allowed says whether this device may call method here, and if not why,
// from host.hello: the grant each method needs and the switch.
export function allowed(method) {
  const hello = state.hello;
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

// reason is what a control for method says beside it when this device may
// not use it here, in a few words ("needs full access", "this device has
// view access"), or '' when it may. allowed's why is the long sentence
// behind it (the button's title).
export function reason(method) {
  const hello = state.hello;
  if (!hello) return 'not connected';
  if (!hello.methods.includes(method)) return 'not offered by this computer';
  const need = hello.methodAccess[method];
  if ((RANK[hello.access] || 0) < (RANK[need] || 9)) return `needs ${need} access; this device has ${hello.access || 'no'} access`;
  if (hello.fullAccessSwitch.includes(method) && !hello.features.includes('remoteFullAccess')) return 'needs Full access for remote devices, which is off on the computer';
  return '';
}

// fullReason is reason for what needs the full grant within a method that
// needs less: a pop within git.stashApply (it drops the stash, as
// git.stashDrop does), the text form of git.resolve (editing the file, as
// files.write). The computer refuses them below full with the same words.
export function fullReason(method) {
  const r = reason(method);
  if (r) return r;
  const have = state.hello.access;
  return have === 'full' ? '' : `needs full access; this device has ${have || 'no'} access`;
}

// disable makes button a control that cannot be used here and says why
// where it is: disabled (and aria-disabled), the reason shown beside it in
// words and linked as its description (aria-describedby), so a screen
// reader says it with the button, and as its title. An empty reason
// leaves the button as it is. It returns what to place: the button
// itself when it is already in the page (the reason is put right after
// it), else a span holding the button and its reason.
//
//   row.append(disable(h('button', {...}, 'Push'), 'no remote to push to'));
//   disable(already, reason('git.push'));
let whys = 0;
export function disable(btn, why) {
  if (!why) return btn;
  btn.disabled = true;
  btn.setAttribute('aria-disabled', 'true');
  btn.title = why;
  const id = `why-${++whys}`;
  btn.setAttribute('aria-describedby', id);
  const said = h('span', { class: 'why', id }, why);
  if (btn.parentNode) {
    btn.after(said);
    return btn;
  }
  return h('span', { class: 'disabled-action' }, btn, said);
}

// action is a button for a method, disabled with its reason beside it
// (disable) when this device may not call it; why, when given, is another
// reason it may not (a secret file, no remote to push to).
export function action(label, method, onclick, attrs = {}, why = '') {
  const btn = h('button', { type: 'button', ...attrs, onclick: () => { clearNotes(); return onclick(); } }, label);
  return disable(btn, reason(method) || why);
}

// run calls a method and shows a refusal as a note with the host's
// sentence; it rethrows so the caller stops.
export async function run(method, params, timeout) {
  try {
    return await state.host.call(method, params, timeout);
  } catch (e) {
    if (e instanceof Refusal && e.code === 'UNPAIRED') return state.unpaired();
    say(e instanceof Refusal ? e.message : 'Something went wrong talking to the computer.');
    throw e;
  }
}

// quiet calls a method and returns null on any refusal, showing nothing:
// for what a screen can do without (a thumbnail, a worktree's status).
export async function quiet(method, params, timeout) {
  try {
    return await state.host.call(method, params, timeout);
  } catch {
    return null;
  }
}

// once runs a change that must not happen twice under a sendId, sending it
// once more if the reply was lost (the host answers a repeat from memory).
export async function once(method, params, timeout = 90_000) {
  const p = { ...params };
  const dedupes = state.hello.features.includes('sendId');
  if (dedupes) p.sendId = newNonce();
  for (let attempt = 0; ; attempt++) {
    try {
      return await state.host.call(method, p, timeout);
    } catch (e) {
      if (!(e instanceof Refusal) || e.code !== 'TIMEOUT') {
        if (e instanceof Refusal && e.code === 'UNPAIRED') return state.unpaired();
        say(e instanceof Refusal ? e.message : 'Something went wrong talking to the computer.');
        throw e;
      }
      if (!dedupes || attempt === 1) {
        say('The computer did not confirm this, so it may have gone through. Check before trying again.');
        throw e;
      }
    }
  }
}

// button is a button for a method. When this device may not call it, it
// stays in its place but reads as unavailable, and a tap says why (a
// disabled button could not be tapped, so its reason would stay unread).
// why, when given, is another reason this one may not (a secret file).
export function button(label, method, onclick, attrs = {}, why = '') {
  const a = allowed(method);
  return guarded(label, a.ok ? why : a.why, onclick, attrs);
}

// guarded is a button that, when why is given, explains instead of acting.
export function guarded(label, why, onclick, attrs = {}) {
  if (why) {
    return h('button', { type: 'button', ...attrs, class: `${attrs.class || ''} off`.trim(), 'aria-disabled': 'true', title: why,
      'aria-label': `${attrs['aria-label'] || label} (not available)`, onclick: () => say(why) }, label);
  }
  return h('button', { type: 'button', ...attrs, onclick: () => { clearNotes(); return onclick(); } }, label);
}

export function setTitle(text, back) {
  $('title').textContent = text;
  $('back').hidden = !back;
  document.title = `${text} · gatehouse`;
}

export function show(...els) {
  $('main').replaceChildren(...els.flat().filter((e) => e !== null && e !== undefined && e !== false));
}

// The navigation stack: each entry is a screen (a render function) with
// its own state (what it had loaded, the scroll position) and its place in
// the address (a route, #/p/<project>/changes). Going on keeps where you
// were; back renders the screen again with its state and puts the scroll
// back. The browser's own back and forward (a phone's back gesture) walk
// the same stack, and a reload opens the screen its address names.
//
// The address holds only the route: a project's id (which serve gives
// every device, and which stays the same across restarts), the screen and
// a path in the checkout, each part encoded. The pairing's keys and the
// session never go there (main.js takes the pairing link out of the
// address before anything else): a route is kept in the browser's history
// and shown in the address bar.
const stack = [];
let ahead = []; // screens left by back, nearest first, for forward
let keys = 0;
let drawing = null; // the entry whose render is running its first, synchronous part
let resolveRoute = () => null;

function current() {
  return stack[stack.length - 1];
}

function entry(render, route, key) {
  return { render, route, state: {}, scroll: 0, key: key === undefined ? `${Date.now().toString(36)}.${++keys}` : key };
}

function address(route) {
  return route ? `#${route}` : location.pathname + location.search;
}

// place is called by a screen as it starts drawing (before its first
// await), with its route: the address bar then names it, so a reload or a
// link opens it again. A screen that calls nothing keeps the route of the
// one it was opened from (a diff reloads as its changes).
export function place(route) {
  const e = drawing;
  if (!e) return;
  e.route = route;
  if (e === current() && e.key !== null) window.history.replaceState({ key: e.key }, '', address(route));
}

// paint draws entry. A draw finishes when its calls are answered, so one
// that was overtaken (a live refresh still waiting while the person opened
// another screen) would leave its screen in place of the newer one: the
// newer one is drawn again after it. When the newer one is itself still
// drawing, it may have shown itself already and be filling its list out of
// sight (a screen shows itself, then loads its first page), so it is marked
// overdrawn and draws again when it is done: after a restart, the changes
// screen's refresh left it in place of the History tab tapped meanwhile.
//
// Only a new screen (fresh: go, swap, home, back) clears the notes, which
// were about the screen left. A screen drawn again keeps them: the
// checkout.changed that a commit sets off redraws the changes screen just
// after "Committed 1a2b3c4d." is said, and clearing there took the
// confirmation away before the person could read it. What say put beside
// a button that the drawing took away moves to the top (keepSaid).
async function paint(entry, scroll, fresh) {
  if (fresh) {
    clearNotes();
    tapped = null; // the control that opened a new screen is not on it
    helloAgain();
  }
  entry.painting = (entry.painting || 0) + 1;
  try {
    drawing = entry;
    let drawn;
    try {
      drawn = entry.render(entry.state);
    } finally {
      drawing = null;
    }
    await drawn;
  } finally {
    entry.painting--;
  }
  keepSaid();
  const top = current();
  if (top === entry) {
    if (entry.overdrawn && !entry.painting) {
      entry.overdrawn = false;
      return paint(entry, scroll, false);
    }
    window.scrollTo(0, scroll);
  } else if (top && top.painting) top.overdrawn = true;
  else if (top) await paint(top, window.scrollY, false);
}

// helloAgain asks the computer again, as a new screen opens, what this
// device may do, and draws the top screen again when that changed: a grant
// the person changed on the computer ('gatehouse devices grant') used to
// show only after a reload, its buttons disabled with the old reason. One
// question at a time, never in the way of the screen's drawing.
let helloAsking = false;
function helloAgain() {
  const host = state.host;
  if (!host || !state.hello || helloAsking) return;
  helloAsking = true;
  host.call('host.hello', {}).finally(() => { helloAsking = false; }).then((hello) => {
    if (state.host !== host || !hello) return;
    const was = state.hello;
    state.hello = hello;
    if (was.access !== hello.access || was.methods.join() !== hello.methods.join()) refresh();
  }, () => {}); // no answer: the screen's own calls say why
}

// go opens a new screen on top, at its top; route, when given, is its
// address until the screen says its own (place).
export function go(render, route) {
  const top = current();
  if (top) top.scroll = window.scrollY;
  const e = entry(render, route ?? (top ? top.route : ''));
  stack.push(e);
  ahead = [];
  window.history.pushState({ key: e.key }, '', address(e.route));
  return paint(e, 0, true);
}

// swap replaces the top screen (a tab), at its top.
export function swap(render, route) {
  const was = current();
  const e = entry(render, route ?? was.route, was.key);
  stack[stack.length - 1] = e;
  if (e.key !== null) window.history.replaceState({ key: e.key }, '', address(e.route));
  return paint(e, 0, true);
}

// home starts the stack again from one screen.
export function home(render) {
  const e = entry(render, '');
  stack.length = 0;
  stack.push(e);
  ahead = [];
  window.history.replaceState({ key: e.key }, '', address(''));
  return paint(e, 0, true);
}

// refresh renders the top screen again where it is, keeping the notes.
export function refresh() {
  const top = current();
  return top ? paint(top, window.scrollY, false) : undefined;
}

// back leaves the top screen for the one below, where it was left. Below a
// screen opened from its address (a reload, a link) is the projects list,
// which is not in this tab's history: back draws it in the same place.
export function back() {
  if (stack.length < 2) return;
  if (stack[stack.length - 2].key !== null) {
    window.history.back();
    return;
  }
  stack.pop();
  const root = current();
  root.key = entry().key;
  ahead = [];
  window.history.replaceState({ key: root.key }, '', address(''));
  paint(root, root.scroll, true);
}

// routes tells the stack how to draw a route: resolve(route) gives a
// render function, or null for an address that is not a route. root is
// the screen under every other (the projects). open then draws the screen
// the address names: the one a reload or a link asked for.
export function routes(root, resolve) {
  resolveRoute = (route) => (route === '' ? root : resolve(route));
  const key = window.history.state && window.history.state.key;
  const route = routeOf(location.hash);
  return restore(key || null, route !== null && resolveRoute(route) ? route : '');
}

// tabs are a checkout's screens; a tab replaces the screen in place with
// the screen its route names, drawn as a reload of that address draws it
// (the resolve main.js gives routes). So this module, which every screen
// imports, imports no screen: main.js is the one module that knows them
// all, and the only one that starts anything.
export function tabs(p, active) {
  const list = [['changes', 'Changes'], ['files', 'Files'], ['search', 'Search']];
  if (p.git) list.push(['history', 'History'], ['worktrees', 'Worktrees']);
  if (p.git && state.hello.methods.includes('github.pulls')) list.push(['github', 'GitHub']);
  return h('nav', { class: 'tabs', 'aria-label': 'Checkout' }, list.map(([name, label]) =>
    h('button', { type: 'button', 'aria-current': active === name ? 'page' : false, onclick: () => open(at[name](p)) }, label)));
}

function open(route) {
  const render = resolveRoute(route);
  return render ? swap(render, route) : undefined;
}

// project finds a served project by its target id (a worktree just made).
export async function project(id) {
  const res = await run('projects.list', {}).catch(() => null);
  // Each carries the computer it is served by (main.js), which its routes name.
  if (res) state.projects = res.projects.map((p) => ({ ...p, computer: state.computer || 0 }));
  return (state.projects || []).find((p) => p.id === id) || null;
}

function routeOf(hash) {
  return hash.startsWith('#/') ? hash.slice(1) : hash === '' || hash === '#' ? '' : null;
}

// restore draws the screen of an address this stack does not hold (one
// from before a reload, or typed), over the projects list. A key from the
// tab's history is kept; without one (a link opened) the entry gets its
// own.
function restore(key, route) {
  const render = route === null ? null : resolveRoute(route);
  if (!render) return undefined;
  const root = resolveRoute('');
  if (stack.length) current().scroll = window.scrollY;
  stack.length = 0;
  ahead = [];
  if (route === '' || render === root) {
    stack.push(entry(root, '', key || undefined));
  } else {
    stack.push(entry(root, '', null), entry(render, route, key || undefined));
  }
  const top = current();
  window.history.replaceState({ key: top.key }, '', address(top.route));
  return paint(top, 0, true);
}

window.addEventListener('popstate', (ev) => {
  if (!stack.length) return; // not paired yet
  const key = ev.state && ev.state.key;
  const top = current();
  top.scroll = window.scrollY;
  const below = key ? stack.findIndex((e) => e.key === key) : -1;
  if (below >= 0) {
    if (below === stack.length - 1) return;
    ahead = stack.splice(below + 1).concat(ahead);
    const e = current();
    return void paint(e, e.scroll, true);
  }
  const fwd = key ? ahead.findIndex((e) => e.key === key) : -1;
  if (fwd >= 0) {
    stack.push(...ahead.slice(0, fwd + 1));
    ahead = ahead.slice(fwd + 1);
    const e = current();
    return void paint(e, e.scroll, true);
  }
  // An address typed or edited by hand that names no screen (a bad line
  // number, a '..' segment) left the last screen up under the new address:
  // show the projects instead, and say why.
  if (restore(key, routeOf(location.hash)) === undefined) {
    restore(null, '').then(() => note('This address does not name a screen of this page, so here are your projects.'));
  }
});

// pages loads a paged list into el: fetch(offset) gives {items, next};
// item renders one. More load as the list's end scrolls into view, or with
// the "Load more" button (which a screen reader reaches). state.pages
// remembers how many were loaded, so a screen drawn again on back loads as
// many and its scroll position is still there.
export async function pages(el, st, fetch, item, empty) {
  const want = Math.max(st.pages || 1, 1);
  let offset = 0;
  let loaded = 0;
  let busy = false;
  const more = h('button', { type: 'button', class: 'more' }, 'Load more');
  let observer = null;
  const load = async () => {
    if (busy) return false;
    busy = true;
    more.disabled = true;
    try {
      const res = await fetch(offset);
      if (!res) {
        // The computer said why beside the list; the button stays to ask
        // again, and says so ("Load more" read as if there were more).
        more.textContent = 'Try again';
        return false;
      }
      more.textContent = 'Load more';
      for (const it of res.items) {
        const node = item(it);
        if (node) el.append(node);
      }
      loaded++;
      st.pages = Math.max(st.pages || 0, loaded);
      if (!res.items.length && offset === 0 && empty) el.append(h('li', { class: 'muted empty' }, empty));
      if (res.next) {
        offset = res.next;
        return true;
      }
      more.remove();
      if (observer) observer.disconnect();
      return false;
    } finally {
      busy = false;
      more.disabled = false;
    }
  };
  more.addEventListener('click', () => load());
  el.after(more);
  for (let i = 0; i < want; i++) if (!(await load())) return;
  if ('IntersectionObserver' in window) {
    observer = new IntersectionObserver((ents) => { if (ents.some((e) => e.isIntersecting)) load(); }, { rootMargin: '400px' });
    observer.observe(more);
  }
}

// lock marks a secret entry for a device below full: the reason is shown,
// not only a symbol.
export function lock() {
  return h('span', { class: 'lock' }, icon('lock'), ' Secret');
}

// ago is a date as people say it on a phone.
export function ago(iso) {
  const t = Date.parse(iso);
  if (!t) return '';
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 30) return `${Math.floor(s / 86400)} days ago`;
  return new Date(t).toISOString().slice(0, 10);
}

// pref remembers a small choice of the person's on this device.
export function pref(name, fallback) {
  try {
    const v = localStorage.getItem(`gatehouse-pref:${name}`);
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}
export function setPref(name, value) {
  try {
    localStorage.setItem(`gatehouse-pref:${name}`, JSON.stringify(value));
  } catch {
    // private mode: the choice lasts this visit
  }
}

const IMAGE = /\.(png|jpe?g|gif|webp|bmp|ico|svg)$/i;
// isImage says whether a name is one the host shows as an image.
export function isImage(name) {
  return IMAGE.test(name);
}
