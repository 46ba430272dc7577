// The navigation stack's draws (ui.js paint), through a small document
// stand-in. A note (a confirmation such as "Committed 1a2b3c4d.", a
// refusal's sentence) outlasts its screen drawn again (refresh, which a
// live checkout.changed calls) and goes when another screen opens: the
// browser test saw a commit's own checkout.changed take "Committed …" away
// before anyone could read it. And a draw that was overtaken never leaves
// its screen in place of the newer one, even when the newer one had
// already shown itself: the browser test saw the changes screen's refresh
// after a restart stay in place of the History tab tapped meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';

class El {
  constructor(tag) { this.tag = tag; this.kids = []; this.attrs = {}; this.className = ''; this.nodeType = 1; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  addEventListener() {}
  append(...xs) { this.kids.push(...xs); }
  replaceChildren(...xs) { this.kids = xs; }
  get textContent() { return this.kids.map((k) => (typeof k === 'string' ? k : k.textContent)).join(''); }
  set textContent(t) { this.kids = [String(t)]; }
}
const byId = { notes: new El('div'), main: new El('main'), title: new El('h1'), back: new El('button') };
globalThis.document = { createElement: (t) => new El(t), getElementById: (id) => byId[id] ?? null, title: '', addEventListener() {} };
const listeners = {};
// The tab's history: its entries' states, and where it stands.
const tab = { entries: [null], at: 0 };
globalThis.history = {
  get state() { return tab.entries[tab.at]; },
  pushState(st) { tab.entries = tab.entries.slice(0, tab.at + 1).concat([st]); tab.at++; },
  replaceState(st) { tab.entries[tab.at] = st; },
  back() { if (tab.at > 0) tab.at--; },
};
globalThis.window = { scrollY: 0, scrollTo() {}, addEventListener: (t, f) => { listeners[t] = f; }, history: globalThis.history };
globalThis.location = { pathname: '/', search: '', hash: '' };
// After the stand-ins: ui.js listens for popstate as it loads.
const { note, show, go, swap, home, refresh } = await import('../src/ui.js');
const { h } = await import('../src/dom.js');

const notes = () => byId.notes.textContent;
const main = () => byId.main.textContent;

// screen is a render that shows name once its call is answered: at once,
// or, while slow.hold is a promise, when it settles (a slow host).
const slow = { hold: null };
function screen(name) {
  return async () => {
    if (slow.hold) await slow.hold;
    show(h('p', {}, name));
  };
}
// listScreen shows name at once, then waits for its list as screen does
// (a screen that shows itself, then loads its first page), and fills it.
function listScreen(name) {
  return async () => {
    const list = h('ul', {});
    show(h('p', {}, name), list);
    if (slow.hold) await slow.hold;
    list.append(h('li', {}, ': its list'));
  };
}
// holdNext makes the next render wait, and returns what answers it.
function holdNext() {
  let answer;
  slow.hold = new Promise((r) => { answer = r; });
  return () => { slow.hold = null; answer(); };
}

test('a note outlasts its screen drawn again, and goes with a new screen', async () => {
  await home(screen('changes'));
  note('Committed 1a2b3c4d.');
  await refresh(); // the checkout.changed the commit set off
  assert.equal(notes(), 'Committed 1a2b3c4d.', 'a refresh after the note keeps it');

  // A live refresh already waiting for the host when the note is said.
  const answer = holdNext();
  const waiting = refresh();
  note('Committed 2b3c4d5e.');
  answer();
  await waiting;
  assert.equal(notes(), 'Committed 2b3c4d5e.', 'a refresh around the note keeps it');

  await go(screen('history'));
  assert.equal([main(), notes()].join('|'), 'history|', 'a new screen clears the notes');
  note('Pushed.');
  await swap(screen('files'));
  assert.equal(notes(), '', 'a tab clears the notes');
  note('Saved.');
  await home(screen('projects'));
  assert.equal(notes(), '', 'home clears the notes');
  await go(screen('changes'));
  note('Discarded 3 files.');
  history.back();
  listeners.popstate({ state: history.state }); // the browser's back
  await new Promise((r) => setImmediate(r));
  assert.equal([main(), notes()].join('|'), 'projects|', 'back clears the notes');
});

test('a screen drawn again after an overtaken draw keeps its note', async () => {
  // A refresh of the changes screen still waits for the host while the
  // person opens the history, which says something; then the changes
  // screen's answer comes and draws it over the history, so the history
  // is drawn again, and its note stays.
  await home(screen('changes'));
  const answer = holdNext();
  const stale = refresh();
  slow.hold = null;
  await go(screen('history'));
  note('Stage a change first.');
  answer();
  await stale;
  assert.equal([main(), notes()].join('|'), 'history|Stage a change first.');
});

test('an overtaken draw never stays over a newer screen that showed itself first', async () => {
  // After a restart the changes screen's refresh waits for git.status;
  // the person taps History, which shows itself and waits for git.log;
  // git.status answers and the changes screen is drawn over the history;
  // then git.log answers. The history must be what is left, with its list.
  await home(screen('changes'));
  const statusAnswers = holdNext();
  const stale = refresh();
  const logAnswers = holdNext();
  const history = swap(listScreen('history'));
  assert.equal(main(), 'history', 'the history shows itself at once');
  statusAnswers();
  await stale;
  assert.equal(main(), 'changes', 'the stale draw lands over it (what the fix must undo)');
  logAnswers();
  await history;
  assert.equal(main(), 'history: its list');
});
