// Routes: where each screen is in the page's address (#/p/<project>/files/
// src/lib), so a reload, the browser's back and forward, and a link kept
// from the page open the same screen (ui.js draws them). A route names a
// project by its id (serve gives it to every device, and it stays the same
// across restarts), the screen, and a path in the checkout or a commit,
// every part encoded with encodeURIComponent, one path segment at a time.
// Nothing secret goes in: the pairing's keys and the session stay in the
// page's memory, and the address is kept in the browser's history.

const seg = (s) => encodeURIComponent(s);
const path = (p) => String(p).split('/').map(seg).join('/');
// A project of another computer this page paired with (main.js) carries
// its number, and its routes begin with /c/<n>.
const base = (p) => `${p.computer ? `/c/${Number(p.computer)}` : ''}/p/${seg(p.id)}`;

export const at = {
  changes: (p) => `${base(p)}/changes`,
  files: (p, dir) => `${base(p)}/files${dir ? `/${path(dir)}` : ''}`,
  file: (p, file, line) => `${base(p)}/file/${path(file)}${line ? `?line=${Number(line)}` : ''}`,
  search: (p) => `${base(p)}/search`,
  history: (p, file) => `${base(p)}/history${file ? `/${path(file)}` : ''}`,
  commit: (p, oid) => `${base(p)}/commit/${seg(oid)}`,
  blame: (p, file) => `${base(p)}/blame/${path(file)}`,
  diffAll: (p) => `${base(p)}/diff`,
  worktrees: (p) => `${base(p)}/worktrees`,
  conflicts: (p) => `${base(p)}/conflicts`,
  stashes: (p) => `${base(p)}/stashes`,
  github: (p) => `${base(p)}/github`,
  branches: (p) => `${base(p)}/branches`,
  tags: (p) => `${base(p)}/tags`,
  clone: () => '/clone',
  computer: (n) => (n ? `/c/${Number(n)}` : ''),
};

const SCREENS = new Set(['changes', 'files', 'file', 'search', 'history', 'commit', 'worktrees', 'github', 'conflicts', 'stashes', 'branches', 'tags', 'blame', 'diff']);
const ROUTE = /^(?:\/c\/([1-9][0-9]{0,2}))?\/p\/([^/?]+)\/([a-z]+)(?:\/([^?]*))?(?:\?line=([1-9][0-9]{0,8}))?$/;

const COMPUTER = /^\/c\/([1-9][0-9]{0,2})$/;

// parse reads a route back: {screen, id, path, line, computer}, or null for
// anything that is not one this page makes (a malformed escape, an empty or
// dot segment, a screen it does not have). computer is 0 for the computer
// that served this page. The host checks every path again.
export function parse(route) {
  if (route === '/clone') return { screen: 'clone' };
  const c = COMPUTER.exec(route);
  if (c) return { screen: 'computer', computer: Number(c[1]) };
  const m = ROUTE.exec(route);
  if (!m || !SCREENS.has(m[3])) return null;
  try {
    const id = decodeURIComponent(m[2]);
    const parts = m[4] === undefined || m[4] === '' ? [] : m[4].split('/').map(decodeURIComponent);
    if (parts.some((x) => x === '' || x === '.' || x === '..')) return null;
    const file = parts.join('/');
    if ((m[3] === 'file' || m[3] === 'commit' || m[3] === 'blame') && !file) return null;
    return { screen: m[3], id, path: file, line: m[5] ? Number(m[5]) : 0, computer: m[1] ? Number(m[1]) : 0 };
  } catch {
    return null; // a malformed escape
  }
}
