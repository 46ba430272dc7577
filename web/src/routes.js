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
const base = (p) => `/p/${seg(p.id)}`;

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
};

const SCREENS = new Set(['changes', 'files', 'file', 'search', 'history', 'commit', 'worktrees', 'github', 'conflicts', 'stashes', 'branches', 'tags', 'blame', 'diff']);
const ROUTE = /^\/p\/([^/?]+)\/([a-z]+)(?:\/([^?]*))?(?:\?line=([1-9][0-9]{0,8}))?$/;

// parse reads a route back: {screen, id, path, line}, or null for anything
// that is not one this page makes (a malformed escape, an empty or dot
// segment, a screen it does not have). The host checks every path again.
export function parse(route) {
  if (route === '/clone') return { screen: 'clone' };
  const m = ROUTE.exec(route);
  if (!m || !SCREENS.has(m[2])) return null;
  try {
    const id = decodeURIComponent(m[1]);
    const parts = m[3] === undefined || m[3] === '' ? [] : m[3].split('/').map(decodeURIComponent);
    if (parts.some((x) => x === '' || x === '.' || x === '..')) return null;
    const file = parts.join('/');
    if ((m[2] === 'file' || m[2] === 'commit' || m[2] === 'blame') && !file) return null;
    return { screen: m[2], id, path: file, line: m[4] ? Number(m[4]) : 0 };
  } catch {
    return null; // a malformed escape
  }
}
