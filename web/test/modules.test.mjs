// The page's modules form no cycle, and a screen loads without the app.
// Every screen used to import tabs() and project() from main.js, which
// starts the app as it loads (pairing, the event stream), so no screen
// could be loaded, let alone tested, outside a browser that pairs: the
// screens now take both from ui.js, which imports no screen (a tab opens
// the screen its route names, through the resolve main.js gives routes),
// and main.js, the entry esbuild bundles, is imported by nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const src = new URL('../src/', import.meta.url);

// imports gives each module in src/ the modules of src/ it imports,
// statically or with import().
function imports() {
  const graph = {};
  for (const name of readdirSync(src).filter((n) => n.endsWith('.js'))) {
    const text = readFileSync(new URL(name, src), 'utf8');
    const found = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]\.\/([^'"]+)['"]/gm)].map((m) => m[1]);
    graph[name] = [...new Set(found)];
  }
  return graph;
}

// cycle gives a path of imports that comes back to where it started, or null.
function cycle(graph) {
  const done = new Set();
  const walk = (name, path) => {
    const at = path.indexOf(name);
    if (at >= 0) return [...path.slice(at), name];
    if (done.has(name)) return null;
    for (const next of graph[name] || []) {
      const found = walk(next, [...path, name]);
      if (found) return found;
    }
    done.add(name);
    return null;
  };
  for (const name of Object.keys(graph)) {
    const found = walk(name, []);
    if (found) return found;
  }
  return null;
}

test('no module imports main.js, and the imports form no cycle', () => {
  const graph = imports();
  assert.ok(graph['main.js'] && graph['main.js'].includes('changes.js'), `the import reader did not see main.js import changes.js: ${JSON.stringify(graph['main.js'])}`);
  const importers = Object.keys(graph).filter((name) => graph[name].includes('main.js'));
  assert.deepEqual(importers, [], `main.js starts the app as it loads; these modules import it: ${importers.join(', ')}`);
  const found = cycle(graph);
  assert.equal(found, null, `the modules import each other in a cycle: ${found && found.join(' → ')}`);
});

test('the cycle check sees one', () => {
  assert.deepEqual(cycle({ 'a.js': ['b.js'], 'b.js': ['ui.js', 'a.js'], 'ui.js': [] }), ['a.js', 'b.js', 'a.js']);
  assert.equal(cycle({ 'main.js': ['a.js', 'ui.js'], 'a.js': ['ui.js'], 'ui.js': [] }), null);
});

// A document stand-in: enough for h(), show() and setTitle(), with the
// listeners an element was given kept so a test can tap it.
class El {
  constructor(tag) { this.tag = tag; this.kids = []; this.attrs = {}; this.on = {}; this.className = ''; this.nodeType = 1; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return this.attrs[k] ?? null; }
  addEventListener(t, f) { this.on[t] = f; }
  append(...xs) { this.kids.push(...xs); }
  replaceChildren(...xs) { this.kids = xs; }
  click() { return this.on.click && this.on.click(); }
  get textContent() { return this.kids.map((k) => (typeof k === 'string' ? k : k.textContent)).join(''); }
  set textContent(t) { this.kids = [String(t)]; }
  all(tag) { return this.kids.flatMap((k) => (typeof k === 'string' ? [] : [...(k.tag === tag ? [k] : []), ...k.all(tag)])); }
}
const byId = { notes: new El('div'), main: new El('main'), title: new El('h1'), back: new El('button'), live: new El('span') };
globalThis.document = { createElement: (t) => new El(t), createElementNS: (_, t) => new El(t), getElementById: (id) => byId[id] ?? null, title: '', addEventListener() {} };
const tab = { entries: [{ st: null, url: '/' }], at: 0 };
globalThis.history = {
  get state() { return tab.entries[tab.at].st; },
  pushState(st, _, url) { tab.entries = tab.entries.slice(0, tab.at + 1).concat([{ st, url }]); tab.at++; },
  replaceState(st, _, url) { tab.entries[tab.at] = { st, url }; },
  back() { if (tab.at > 0) tab.at--; },
};
globalThis.window = { scrollY: 0, scrollTo() {}, addEventListener() {}, history: globalThis.history };
globalThis.location = { pathname: '/', search: '', hash: '' };

test('a screen loads without starting the app, and its tabs open their routes', async () => {
  const { changes } = await import('../src/changes.js');
  const { routes, go, state } = await import('../src/ui.js');
  const { at } = await import('../src/routes.js');
  // main.js, once loaded, draws the back button's icon and a pairing or
  // an unpaired screen at once: nothing is drawn.
  assert.equal(byId.back.kids.length, 0, 'loading changes.js started the app: the back button was drawn');
  assert.equal(byId.main.textContent, '', `loading changes.js drew a screen: ${byId.main.textContent}`);

  const folder = { id: 'notes-1', name: 'notes', git: false };
  state.projects = [folder];
  state.hello = { access: 'view', methods: [] };
  const asked = [];
  await routes(() => byId.main.replaceChildren('Projects'), (route) => {
    asked.push(route);
    return () => byId.main.replaceChildren(`drawn ${route}`);
  });
  await go((s) => changes(folder, s), at.changes(folder));
  assert.match(byId.main.textContent, /This folder is not a git checkout/, `the changes screen of a folder: ${byId.main.textContent}`);
  assert.equal(byId.title.textContent, 'notes');
  const buttons = byId.main.all('button');
  assert.deepEqual(buttons.map((b) => b.textContent), ['Changes', 'Files', 'Search'], 'a folder has no History, Worktrees or GitHub tab');
  assert.deepEqual(buttons.map((b) => b.getAttribute('aria-current')), ['page', null, null], 'the Changes tab is the current one');

  await buttons[1].click();
  assert.deepEqual(asked, ['/p/notes-1/files'], 'the Files tab opens the route of the folder\'s files');
  assert.equal(byId.main.textContent, 'drawn /p/notes-1/files');
  assert.equal(tab.entries[tab.at].url, '#/p/notes-1/files', 'the address names the tab opened');
  assert.equal(tab.entries.length, 2, 'a tab replaces the screen, it does not add one to the history');
});
