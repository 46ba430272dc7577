package fsguard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse/gatehouse/internal/fileid"
	"github.com/gatehouse/gatehouse/secretfiles"
	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

// Options place a root on this computer.
type Options struct {
	// Home is the user's home folder; "" means os.UserHomeDir.
	Home string
	// StateDir is gatehouse's own data folder (trust.DefaultDir); a root that
	// is, holds or sits inside it is refused below full. "" means none.
	StateDir string
	// ConfigDir is gatehouse's config folder (trust.DefaultConfigDir), under
	// the same rule: its settings.json sets the memory bound of a phone's
	// git and where a phone's clone is written, so a phone that could write
	// there (serving ~/.config at control) could loosen its own walls at
	// the next start. "" or StateDir means none more.
	ConfigDir string
	// Secrets decides which files are secret; nil means secretfiles.Default.
	Secrets *secretfiles.Matcher
}

// Root is one served folder, opened once. Every method reads or writes only
// beneath it, by descriptor, never by joining strings. A Root is safe for
// concurrent use.
type Root struct {
	fd        int
	canonical string
	name      string
	scope     secretfiles.Scope
	isHome    bool // "/", the home folder or an ancestor of it
	isAppData bool // is, holds or sits inside gatehouse's data folder
}

// OpenRoot opens the folder dir as a root.
func OpenRoot(dir string, opts Options) (*Root, error) {
	given, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open root: %w", err)
	}
	canonical, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, fmt.Errorf("open root: %w", err)
	}
	fd, err := openRootFD(canonical)
	if err != nil {
		return nil, fmt.Errorf("open root %s: %w", canonical, err)
	}
	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	m := opts.Secrets
	if m == nil {
		m = secretfiles.Default()
	}
	homes := bothSpellings(home)
	roots := bothSpellings(given)
	r := &Root{
		fd:        fd,
		canonical: canonical,
		name:      filepath.Base(canonical),
		scope:     m.For(canonical, lastOf(homes)),
	}
	for _, root := range roots {
		r.isHome = r.isHome || root == "/" || anyMatch(homes, func(h string) bool { return h == root || inside(root, h) })
		touches := func(s string) bool { return s == root || inside(root, s) || inside(s, root) }
		r.isAppData = r.isAppData || anyMatch(bothSpellings(opts.StateDir), touches) || anyMatch(bothSpellings(opts.ConfigDir), touches)
	}
	// The same folders by identity: a bind mount (or a macOS firmlink) is
	// the same folder under a path the comparisons above do not know, and
	// serving a bind mount of a home folder kept in git let a control phone
	// discard the state folder's settings.json and so turn Full access on.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil && !byPathOnlyForTest {
		id := fileid.FromStat(&st)
		r.isHome = r.isHome || anyMatch(homes, func(h string) bool { return isOrHolds(id, h) })
		for _, dir := range append(bothSpellings(opts.StateDir), bothSpellings(opts.ConfigDir)...) {
			if isOrHolds(id, dir) || holdsFolder(dir, id) {
				r.isAppData = true
			}
		}
	}
	return r, nil
}

// isOrHolds reports whether the folder id is dir or one of dir's ancestors,
// compared by identity (device and inode), so a second path to the same
// folder is no way around it.
func isOrHolds(id fileid.ID, dir string) bool {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if got, err := fileid.Lstat(p); err == nil && got == id {
			return true
		}
		if p == "/" || p == "." {
			return false
		}
	}
}

// maxAppDataFolders bounds the folders holdsFolder looks at: gatehouse's
// own folders hold a handful.
const maxAppDataFolders = 10000

// holdsFolder reports whether the folder id is one of the folders inside
// dir (gatehouse's state or config folder), by identity: a bind mount of a
// folder in it is its data under another path. Symlinks are not followed;
// past maxAppDataFolders it answers yes, since a folder of gatehouse's that
// large is not one it made.
func holdsFolder(dir string, id fileid.ID) bool {
	seen, found := 0, false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if seen++; seen > maxAppDataFolders {
			found = true
			return filepath.SkipAll
		}
		if got, err := fileid.Lstat(p); err == nil && got == id {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// bothSpellings returns a path as given (made absolute and clean) and
// canonicalized, so a rule compared against both catches a symlink to home.
func bothSpellings(p string) []string {
	if p == "" {
		return nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil
	}
	out := []string{abs}
	if c, err := filepath.EvalSymlinks(abs); err == nil && c != abs {
		out = append(out, c)
	}
	return out
}

func lastOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func anyMatch(list []string, f func(string) bool) bool {
	for _, s := range list {
		if f(s) {
			return true
		}
	}
	return false
}

// inside reports whether path is strictly inside dir.
func inside(dir, path string) bool {
	return strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// Close releases the root's descriptor.
func (r *Root) Close() error { return unix.Close(r.fd) }

// Name is the root folder's own name, safe to show a device.
func (r *Root) Name() string { return r.name }

// Path is the root's canonical absolute path, for this computer only (gate
// pins git to it). It must never reach a device.
func (r *Root) Path() string { return r.canonical }

// Secret reports the rule that makes rel (a path inside the root) secret, by
// name and as seen from home.
func (r *Root) Secret(rel string) (secretfiles.Rule, bool) { return r.scope.Match(rel) }

// AllowedFor applies the home and app-data rule (allowRoot) to a whole
// project: the host asks it before any method that names the project, so
// git's methods refuse such a project below full as file reads do.
func (r *Root) AllowedFor(g trust.Grant) error { return r.allowRoot(g) }

// allowRoot applies the home and app-data rule: below full, a root that is
// "/", home or above it, or that touches gatehouse's own data, is refused for
// reading.
func (r *Root) allowRoot(g trust.Grant) error {
	if g.SeesSecrets() {
		return nil
	}
	if r.isHome {
		return ErrHomeRoot
	}
	if r.isAppData {
		return ErrAppDataRoot
	}
	return nil
}

// maxLinks bounds the symlinks one resolution follows (the kernel's own
// limit is 40).
const maxLinks = 40

// resolved is where a device's path leads.
type resolved struct {
	rel     string      // the path inside the root with every symlink resolved
	st      unix.Stat_t // lstat of rel as seen during resolution
	outside string      // when the path leaves the root: the absolute place it leads to
}

// resolve follows the symlinks of clean (a validated path) inside the root,
// one component at a time, never through the kernel's own link following. A
// link that leaves the root ends the walk with ErrOutsideRoot and the place
// it leads to, so callers can still tell whether that place is a secret.
func (r *Root) resolve(clean string) (resolved, error) {
	var done []string
	todo := splitSegs(clean)
	links := 0
	for len(todo) > 0 {
		seg := todo[0]
		todo = todo[1:]
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return r.outsideFrom(filepath.Dir(r.canonical), todo), ErrOutsideRoot
			}
			done = done[:len(done)-1]
			continue
		}
		rel := strings.Join(append(done, seg), "/")
		st, target, err := lstatIn(r.fd, rel)
		if err != nil {
			return resolved{rel: rel}, mapErrno(err)
		}
		if !isLink(&st) {
			done = append(done, seg)
			if len(todo) == 0 {
				return resolved{rel: rel, st: st}, nil
			}
			if !isDir(&st) {
				return resolved{rel: rel}, ErrNotFound
			}
			continue
		}
		if links++; links > maxLinks {
			return resolved{rel: rel}, ErrTooManyLinks
		}
		if filepath.IsAbs(target) {
			inRoot, ok := strings.CutPrefix(filepath.Clean(target), r.canonical)
			if !ok || inRoot != "" && inRoot[0] != '/' {
				return r.outsideFrom(target, todo), ErrOutsideRoot
			}
			done = nil
			target = strings.TrimPrefix(inRoot, "/")
		}
		todo = append(splitSegs(target), todo...)
	}
	st, _, err := lstatIn(r.fd, ".")
	return resolved{rel: ".", st: st}, mapErrno(err)
}

func (r *Root) outsideFrom(base string, rest []string) resolved {
	return resolved{outside: filepath.Join(append([]string{base}, rest...)...)}
}

func splitSegs(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(filepath.ToSlash(p), "/")
}

// access is what one checked open allows.
type access struct {
	op    string
	grant trust.Grant
	// root applies the home and app-data rule (reads below full).
	root bool
	// namesOnly: only names will be read (a listing), so a secret folder may
	// be opened; its entries carry their own secret flags.
	namesOnly bool
}

// check applies the name rules to a path inside the root: never .git, and
// below full never a secret.
func (a access) checkName(r *Root, rel string) error {
	if hasGitSegment(rel) {
		return ErrGitPath
	}
	if !a.grant.SeesSecrets() && !a.namesOnly {
		if _, secret := r.scope.Match(rel); secret {
			return ErrSecret
		}
	}
	return nil
}

// locate validates a device's path and applies the rules to it as sent. It
// is the first half of every checked open.
func (r *Root) locate(a access, unsafePath string) (string, error) {
	if a.root {
		if err := r.allowRoot(a.grant); err != nil {
			return "", err
		}
	}
	clean, err := ValidatePath(unsafePath)
	if err != nil {
		return "", err
	}
	return clean, a.checkName(r, clean)
}

// follow resolves a path that met a symlink and applies the rules to what
// it resolves to: a link to .git, to a secret (inside the root or out) or
// out of the root is refused.
func (r *Root) follow(a access, clean string) (resolved, error) {
	res, err := r.resolve(clean)
	if err == ErrOutsideRoot {
		if !a.grant.SeesSecrets() && !a.namesOnly {
			if _, secret := r.scope.MatchAbs(res.outside); secret {
				return res, ErrSecret
			}
		}
		return res, ErrOutsideRoot
	}
	if err != nil {
		return res, err
	}
	return res, a.checkName(r, res.rel)
}

// openFile is the handle-checked open of a regular file: the one way a
// device's path becomes a readable descriptor. The handle is a regular file
// with exactly one link, and when the path went through a symlink, the same
// inode the resolution saw; the caller reads from it and from nothing else.
func (r *Root) openFile(a access, unsafePath string) (*os.File, unix.Stat_t, string, error) {
	var st unix.Stat_t
	clean, err := r.locate(a, unsafePath)
	if err != nil {
		return nil, st, "", pathErr(a.op, quoted(unsafePath, err), err)
	}
	fd, st, err := openFileIn(r.fd, clean, checkRegular)
	rel := clean
	if err == errSymlinkInPath {
		var res resolved
		res, err = r.follow(a, clean)
		if err != nil {
			return nil, st, "", pathErr(a.op, clean, err)
		}
		rel = res.rel
		fd, st, err = openFileIn(r.fd, rel, checkRegular)
		if err == nil && !sameFile(&st, &res.st) {
			_ = unix.Close(fd)
			err = ErrChanged
		}
	}
	if err != nil {
		return nil, st, "", pathErr(a.op, clean, mapErrno(err))
	}
	return os.NewFile(uintptr(fd), r.name+"/"+rel), st, rel, nil
}

// checkRegular is the handle check for every file read: a regular file with
// exactly one link. A hard link names no secret and crosses no symlink, so
// it could otherwise expose ~/.ssh/id_rsa from inside a project.
func checkRegular(st *unix.Stat_t) error {
	switch {
	case isDir(st):
		return ErrIsDir
	case !isRegular(st):
		return ErrNotRegular
	case st.Nlink != 1:
		return ErrHardLink
	}
	return nil
}

// openDir is the checked open of a folder, for listing.
func (r *Root) openDir(a access, unsafePath string) (*os.File, string, error) {
	clean, err := r.locate(a, unsafePath)
	if err != nil {
		return nil, "", pathErr(a.op, quoted(unsafePath, err), err)
	}
	rel := clean
	fd, err := openDirIn(r.fd, clean)
	if err == errSymlinkInPath {
		var res resolved
		if res, err = r.follow(a, clean); err == nil {
			rel = res.rel
			fd, err = openDirIn(r.fd, rel)
			if err == errSymlinkInPath {
				err = ErrChanged
			}
		}
	}
	if err != nil {
		return nil, "", pathErr(a.op, clean, mapErrno(err))
	}
	return os.NewFile(uintptr(fd), r.name+"/"+rel), rel, nil
}

// quoted shows a path that failed validation only as a quoted string in
// logs; a valid one as is.
func quoted(unsafePath string, err error) string {
	if err == ErrInvalidPath && len(unsafePath) > 200 {
		return unsafePath[:200] + "…"
	}
	return unsafePath
}

// mapErrno turns system errors into refusals a device may see.
func mapErrno(err error) error {
	switch err {
	case unix.ENOENT:
		return ErrNotFound
	case unix.ENOTDIR:
		return ErrNotDir
	case unix.ELOOP, errSymlinkInPath:
		return ErrChanged
	case unix.EXDEV:
		return ErrOutsideRoot
	}
	return err
}

// byPathOnlyForTest compares a root with home and gatehouse's folders by
// path alone, as before, to show what a bind mount got past.
var byPathOnlyForTest bool
