package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/fileid"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// level is which gate an operation needs.
type level int

const (
	// readGate: status, diff, log, show, branches, ahead/behind, worktree
	// status.
	readGate level = iota + 1
	// changeGate: stage, discard, commit, push, fetch, pull, switch,
	// worktree create, merge and remove.
	changeGate
)

// entry is one line of git's config listing.
type entry struct {
	key, value string
	hasValue   bool
}

// Finding is one config entry a gate refuses, for the audit.
type Finding struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Gate   string `json:"gate"` // "read" (both gates refuse it) or "change"
	Reason string `json:"reason"`
}

// decision is what the config listing decided for closed calls.
type decision struct {
	// worktreeConfig: config.worktree existed and was listed with the
	// local config.
	worktreeConfig bool
	findings       []Finding
	// defined lists the drivers the local config defines, by kind (filter,
	// diff, merge): attributes naming one make the repository choose a
	// program.
	defined   map[string]map[string]bool
	badFilter []string // filter drivers whose names cannot go on the command line
	overrides []Option // every filter driver, from any config file, switched off (the Read gate)
	tooLarge  bool
	// userDrivers are the drivers the user's own config (system, global and
	// what they include) defines, which a repository's attributes can
	// select: filters are switched off with the repository's own; merge
	// drivers refuse a closed merge (mergeDrivers, "key (scope)").
	mergeDrivers []string
	// userFiles are the user's config files the decision read, and the
	// places git looks for them; userFP their identity then. A change to
	// any (a new global filter) makes the next call decide again.
	userFiles []string
	userFP    string
}

// open is the decision for the desktop and a phone with the switch on: no
// gate, no overrides. The runner still pins the repository and applies
// everything forced for everyone.
var openDecision = &decision{}

// cached is the last decision and the identity of every config file it
// read (the user's own files: decision.userFiles). The git folder's shape (layout.go) is checked before the cache is
// consulted, so a symlinked config, or one swapped for a link, never reaches
// this comparison.
type cached struct {
	ids [2]fileid.ID // config, config.worktree
	d   *decision
}

// decide makes (or reuses) the decision for an operation at lvl and refuses
// when the gate says no, naming action in the sentence. It runs before the
// operation's first git call. For an open trust it decides nothing.
func (r *Repo) decide(ctx context.Context, t trust.Trust, lvl level, action string) (*decision, error) {
	if !t.Closed() {
		return openDecision, nil
	}
	if !r.heldFolderForTest {
		if moved, err := r.common.current(); err != nil {
			return nil, err
		} else if moved {
			r.forget() // what was decided about the folder git no longer opens
		}
	}
	if !r.shapeOffForTest {
		if err := r.checkLayout(action); err != nil {
			return nil, err
		}
	}
	d, err := r.cachedDecision(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := d.check(lvl, action); err != nil {
		return nil, err
	}
	if lvl == changeGate && r.hasSubmodules() {
		return nil, refuseSubmodules(action)
	}
	return d, nil
}

// forget drops the cached decision and the git folder's shape.
func (r *Repo) forget() {
	r.mu.Lock()
	r.cache = cached{}
	r.mu.Unlock()
	r.shape.mu.Lock()
	r.shape.dirs = nil
	r.shape.mu.Unlock()
}

// worktreeConfig is the per-worktree config file git reads for this
// checkout when extensions.worktreeConfig is on: config.worktree in the
// checkout's own git folder (the main one's, or worktrees/NAME for a linked
// worktree).
func (r *Repo) worktreeConfig() string { return filepath.Join(r.gitDir, "config.worktree") }

// identities stats the config files a decision reads.
func (r *Repo) identities() ([2]fileid.ID, error) {
	var ids [2]fileid.ID
	var err error
	if ids[0], err = r.common.at("config"); err != nil {
		return ids, fmt.Errorf("gate: %w", err)
	}
	if ids[1], err = fileid.Lstat(r.worktreeConfig()); err != nil {
		return ids, fmt.Errorf("gate: %w", err)
	}
	return ids, nil
}

// cachedDecision returns the decision for the config as it is now: from the
// cache when no file it read changed (two stats, no process), else from a
// fresh listing.
func (r *Repo) cachedDecision(ctx context.Context, t trust.Trust) (*decision, error) {
	r.mu.Lock()
	c := r.cache
	r.mu.Unlock()
	ids, err := r.identities()
	if err != nil {
		return nil, err
	}
	if c.d != nil && c.ids == ids && userUnchanged(c.d.userFiles, c.d.userFP) {
		return c.d, nil
	}
	listed := time.Now()
	d, err := r.freshDecision(ctx, t, ids[1] != fileid.ID{})
	if err != nil {
		return nil, err
	}
	if racy(ids[0], listed) || racy(ids[1], listed) {
		return d, nil // too fresh to be sure the next stat would see a change
	}
	r.mu.Lock()
	r.cache = cached{ids: ids, d: d}
	r.mu.Unlock()
	return d, nil
}

// freshDecision lists the local config through git itself, never a parser
// of gatehouse's own: a parser that read a file differently from git would
// be a hole (CVE-2025-48384 is such a difference). A config.worktree that
// exists is listed too, whatever extensions.worktreeConfig says: git reads
// that switch as a boolean with rules of its own (2, 1k and 0x1 are all
// true), and judging a file git might not read costs nothing but caution.
// Every boolean the rules depend on is then read as git reads it
// (gitsyntax.go).
func (r *Repo) freshDecision(ctx context.Context, t trust.Trust, hasWorktreeConfig bool) (*decision, error) {
	listing := &decision{} // the bootstrap call needs no overrides: listing runs no filter
	entries, large, err := r.listConfig(ctx, t, listing, "--local")
	if err != nil {
		return nil, err
	}
	if hasWorktreeConfig {
		more, l2, err := r.listConfig(ctx, t, listing, "--file", r.worktreeConfig())
		if err != nil {
			return nil, err
		}
		entries, large = append(entries, more...), large || l2
	}
	bools, err := r.readBools(ctx, t, listing, entries)
	if err != nil {
		return nil, err
	}
	d := classify(entries, bools)
	d.tooLarge, d.worktreeConfig = large, hasWorktreeConfig
	if d.refusesReads() || r.userConfigOffForTest {
		return d, nil // an include of the repository's own is refused: never follow it
	}
	return d, r.addUserDrivers(ctx, t, listing, d)
}

// refusesReads reports a finding the Read gate refuses (includes among them).
func (d *decision) refusesReads() bool {
	for _, f := range d.findings {
		if f.Gate == "read" {
			return true
		}
	}
	return false
}

// addUserDrivers asks git for its whole configuration, every scope and
// include as git itself reads them (--show-scope --show-origin), and adds
// the drivers the user's own config defines to what the decision switches
// off: a repository's attributes select a driver by name, wherever it is
// defined, and a global clean filter ran for a view phone's git.diff where
// the kernel wall was missing. Filters are switched off (so LFS users keep
// status: a file git must read again shows as changed, and no program
// runs); merge drivers refuse a closed merge.
func (r *Repo) addUserDrivers(ctx context.Context, t trust.Trust, listing, d *decision) error {
	files := r.userConfigPaths(nil)
	fp := userFingerprint(files)
	res, err := r.run(ctx, t, listing, call{sub: subConfig, opts: []string{"--list", "--show-scope", "--show-origin", "-z"}, okExit: []int{1}})
	var ee *ExitError
	if errors.As(err, &ee) {
		return refusal.Errorf(ErrRefused,
			"The git config on this computer can't be read; turn on Full access for remote devices on this computer to use Git on this checkout from the phone.")
	}
	if err != nil {
		return err
	}
	d.tooLarge = d.tooLarge || res.truncated
	filters := map[string]bool{}
	for _, o := range d.overrides {
		filters[strings.TrimSuffix(strings.TrimPrefix(o.Key, "filter."), ".clean")] = true
	}
	var origins []string
	entries := parseScoped(res.stdout)
	for _, e := range entries {
		if e.scope != "system" && e.scope != "global" {
			continue // the repository's own is classified above; "command" is gatehouse's own -c
		}
		if o, ok := strings.CutPrefix(e.origin, "file:"); ok && !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
	}
	if !r.userIncludesOffForTest {
		more, files := r.everyUserInclude(ctx, t, listing, entries, origins)
		entries = append(entries, more...)
		origins = append(origins, files...)
	}
	for _, e := range entries {
		if e.scope != "system" && e.scope != "global" {
			continue
		}
		sec, rest, _ := strings.Cut(e.key, ".")
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 || (sec != "filter" && sec != "diff" && sec != "merge") {
			continue
		}
		name, field := rest[:i], rest[i+1:]
		if d.defined[sec] == nil {
			d.defined[sec] = map[string]bool{}
		}
		d.defined[sec][name] = true
		switch {
		case sec == "filter" && !filters[name]:
			filters[name] = true
			d.switchOffFilter(name)
		case sec == "merge" && field == "driver":
			d.mergeDrivers = append(d.mergeDrivers, e.key+" ("+e.scope+")")
		}
	}
	d.userFiles = r.userConfigPaths(origins)
	d.userFP = fp
	if len(origins) > 0 {
		d.userFP = userFingerprint(d.userFiles) // with the includes, as read now
	}
	return nil
}

// maxUserIncludes bounds the files everyUserInclude follows.
const maxUserIncludes = 64

// everyUserInclude follows, from the user's own config files, every file an
// include.path or includeIf.<condition>.path names, whether or not its
// condition holds for the listing, and returns the entries of each file the
// listing did not read (read are the files it did), with those files. A
// condition holds for one git and not for another: includeIf
// "onbranch:wt/**" or "gitdir:**/worktrees/**" applies in a new worktree,
// where the checkout that git worktree add starts runs, and not in the
// checkout the decision listed from, so a filter defined only there was not
// switched off and its smudge ran for a phone's worktree.create. So the
// drivers of every file the user's config can include are switched off,
// conditions aside. These files are the user's own (the repository's
// include.* is refused by the gates), read with git's own parser: git
// config --file reads one file and follows none of its includes, and
// --type=path expands an include's path as git does (a relative one is
// relative to the file that names it).
func (r *Repo) everyUserInclude(ctx context.Context, t trust.Trust, listing *decision, entries []scoped, read []string) ([]scoped, []string) {
	// Only files that name an include are asked for their paths, so a
	// config without includes costs no process.
	var queue []string
	for _, e := range entries {
		user := e.scope == "system" || e.scope == "global" // never the repository's own include.*
		if o, ok := strings.CutPrefix(e.origin, "file:"); ok && user && isInclude(e.key) && !slices.Contains(queue, o) {
			queue = append(queue, o)
		}
	}
	seen := map[string]bool{}
	var more []scoped
	var files []string
	for len(queue) > 0 && len(seen) < maxUserIncludes {
		f := queue[0]
		queue = queue[1:]
		if seen[f] {
			continue
		}
		seen[f] = true
		includes := slices.Contains(read, f)
		if !includes {
			if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
				continue // missing: git reads nothing there either
			}
			list, _, err := r.listConfig(ctx, t, listing, "--file", f)
			if err != nil {
				continue // a file git cannot read is not read by git either
			}
			for _, e := range list {
				more = append(more, scoped{scope: "global", origin: "file:" + f, entry: e})
				includes = includes || isInclude(e.key)
			}
			files = append(files, f)
			if !includes {
				continue
			}
		}
		res, err := r.run(ctx, t, listing, call{sub: subConfig, okExit: []int{1},
			opts: []string{"--file", f, "--null", "--type=path", "--get-regexp", `^(include\.path|includeif\..*\.path)$`}})
		if err != nil {
			continue // a path git cannot expand is not followed by git either
		}
		for _, kv := range strings.Split(string(res.stdout), "\x00") {
			_, p, ok := strings.Cut(kv, "\n")
			if !ok || p == "" {
				continue
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(f), p)
			}
			queue = append(queue, p)
		}
	}
	return more, files
}

// isInclude reports a config key that includes another file.
func isInclude(key string) bool {
	return key == "include.path" || strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path")
}

// scoped is one line of git config --list --show-scope --show-origin -z.
type scoped struct {
	scope, origin string
	entry
}

// parseScoped reads "scope\0origin\0key\nvalue\0" records.
func parseScoped(out []byte) []scoped {
	var es []scoped
	f := bytes.Split(out, []byte{0})
	for i := 0; i+2 < len(f); i += 3 {
		k, v, has := bytes.Cut(f[i+2], []byte{'\n'})
		es = append(es, scoped{scope: string(f[i]), origin: string(f[i+1]), entry: entry{key: string(k), value: string(v), hasValue: has}})
	}
	return es
}

// userConfigPaths are the files of the user's own config git reads: the
// system file, the global ones (read whether they exist or not, so one made
// later is noticed), and the files they include.
func (r *Repo) userConfigPaths(included []string) []string {
	paths, _ := r.userConfigPlaces()
	for _, p := range included {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths
}

// userConfigPlaces are where git looks for the user's own config, as its
// config.c finds them (git_system_config, git_global_config): the system
// file ($GIT_CONFIG_SYSTEM, else /etc/gitconfig), and the global ones
// ($GIT_CONFIG_GLOBAL alone when it is set, else ~/.gitconfig and
// $XDG_CONFIG_HOME/git/config, XDG_CONFIG_HOME being ~/.config when
// unset). xdgGit is the folder git also reads the global attributes and
// ignore files from. Where gatehouse runs with a home of its own (the
// regression runner), git gets none of these variables (userConfigEnv),
// and they are not read here either.
func (r *Repo) userConfigPlaces() (files []string, xdgGit string) {
	env := os.Getenv
	home := r.home
	if home != "" || r.userEnvOffForTest {
		env = func(string) string { return "" }
	}
	if home == "" {
		home = os.Getenv("HOME")
	}
	system := env("GIT_CONFIG_SYSTEM")
	if system == "" {
		system = "/etc/gitconfig"
	}
	files = []string{system}
	xdg := env("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		xdgGit = filepath.Join(xdg, "git")
	}
	switch global := env("GIT_CONFIG_GLOBAL"); {
	case global != "":
		files = append(files, global)
	case home != "":
		files = append(files, filepath.Join(home, ".gitconfig"))
		if xdgGit != "" {
			files = append(files, filepath.Join(xdgGit, "config"))
		}
	}
	return files, xdgGit
}

// userFingerprint names what each of the user's config files is now.
func userFingerprint(paths []string) string {
	return string(appendUserFingerprint(nil, paths))
}

// userUnchanged reports whether the user's config files are what fp named:
// the cached decision's check, without an allocation for the names.
func userUnchanged(paths []string, fp string) bool {
	var buf [256]byte
	return string(appendUserFingerprint(buf[:0], paths)) == fp
}

// appendUserFingerprint appends "dev:ino:size:mtime:ctime;" for each file,
// "?;" for one that cannot be stat'ed.
func appendUserFingerprint(b []byte, paths []string) []byte {
	for _, p := range paths {
		id, err := fileid.Lstat(p)
		if err != nil {
			b = append(b, "?;"...)
			continue
		}
		b = strconv.AppendUint(b, id.Dev, 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, id.Ino, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, id.Size, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, id.Mtime, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, id.Ctime, 10)
		b = append(b, ';')
	}
	return b
}

// switchOffFilter adds the overrides that switch filter driver name off.
func (d *decision) switchOffFilter(name string) {
	if strings.ContainsAny(name, "=\n\x00") {
		d.badFilter = append(d.badFilter, name)
		return
	}
	d.overrides = append(d.overrides,
		Option{"filter." + name + ".clean", "", "switch off the clean filter of driver " + name},
		Option{"filter." + name + ".smudge", "", "switch off its smudge filter"},
		Option{"filter." + name + ".process", "", "switch off its long-running filter process"},
		Option{"filter." + name + ".required", "false", "a switched-off filter must not fail the command"},
	)
}

func (r *Repo) listConfig(ctx context.Context, t trust.Trust, d *decision, scope ...string) ([]entry, bool, error) {
	res, err := r.run(ctx, t, d, call{sub: subConfig, opts: append(scope, "--list", "-z"), okExit: []int{1}})
	var ee *ExitError
	if errors.As(err, &ee) {
		// git cannot read the config itself (a bad value, a broken file):
		// nothing it says can be checked, so nothing runs.
		return nil, false, refusal.Errorf(ErrRefused,
			"This repository's git config can't be read; turn on Full access for remote devices on this computer to use Git on this checkout from the phone.")
	}
	if err != nil {
		return nil, false, err
	}
	return parseListing(res.stdout), res.truncated, nil
}

// parseListing reads `git config --list -z`: "key\nvalue\0", or "key\0" for
// a key with no value.
func parseListing(out []byte) []entry {
	var es []entry
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		k, v, has := bytes.Cut(rec, []byte{'\n'})
		es = append(es, entry{key: string(k), value: string(v), hasValue: has})
	}
	return es
}

// classify applies the Read gate's refusals and the Change gate's allowlist
// to every entry, and collects the filter drivers to switch off.
func classify(entries []entry, bools gitBools) *decision {
	d := &decision{defined: map[string]map[string]bool{}}
	drivers := map[string]bool{}
	for _, e := range entries {
		if sec, rest, _ := strings.Cut(e.key, "."); sec == "filter" || sec == "diff" || sec == "merge" {
			if i := strings.LastIndexByte(rest, '.'); i > 0 {
				if d.defined[sec] == nil {
					d.defined[sec] = map[string]bool{}
				}
				d.defined[sec][rest[:i]] = true
				if sec == "filter" {
					drivers[rest[:i]] = true
				}
			}
		}
		if r, ok := firstRule(readRefusals, e.key); ok && refuses(r, e, bools) {
			d.findings = append(d.findings, Finding{Key: e.key, Value: e.value, Gate: "read", Reason: r.Reason})
			continue
		}
		if r, ok := firstRule(allowlist, e.key); ok && valueOK(r.Value, e, bools) {
			continue
		} else if ok {
			d.findings = append(d.findings, Finding{Key: e.key, Value: e.value, Gate: "change",
				Reason: "the allowlist takes only " + describe(r.Value) + " here"})
			continue
		}
		d.findings = append(d.findings, Finding{Key: e.key, Value: e.value, Gate: "change", Reason: reasonFor(e.key)})
	}
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d.switchOffFilter(n)
	}
	return d
}

func firstRule(rules []configRule, key string) (configRule, bool) {
	for _, r := range rules {
		if matchRule(r.Pattern, key) {
			return r, true
		}
	}
	return configRule{}, false
}

func describe(k valueKind) string {
	switch k {
	case boolValue:
		return "a true or false value"
	case networkURL:
		return "a plain https, http, ssh or git URL, or host:path"
	case remoteRef:
		return "a remote's name or a plain network URL"
	}
	return "some values"
}

// reasonFor says why a key the allowlist does not know is refused: what
// git's documentation says keys of its family do.
func reasonFor(key string) string {
	for _, k := range programKeys {
		if matchRule(k.Pattern, key) {
			return k.Reason
		}
	}
	return "not on the allowlist of keys known to run nothing"
}

// check refuses what the gate at lvl refuses.
func (d *decision) check(lvl level, action string) error {
	if d.tooLarge {
		return refusal.Errorf(ErrConfigTooLarge,
			"This repository's git config is too large to check; turn on Full access for remote devices on this computer to %s from the phone.", action)
	}
	var keys []string
	for _, f := range d.findings {
		if f.Gate == "read" || lvl == changeGate {
			keys = append(keys, f.Key)
		}
	}
	if len(d.badFilter) > 0 {
		keys = append(keys, "filter."+d.badFilter[0])
	}
	if len(keys) > 0 {
		return refuseConfig(uniq(keys), action)
	}
	return nil
}

// checkMerge refuses a closed merge when the user's own config defines a
// merge driver: the repository's attributes could select it, and a merge
// would run it.
func (d *decision) checkMerge(action string) error {
	if len(d.mergeDrivers) == 0 {
		return nil
	}
	return refusal.Errorf(ErrRefused,
		"The git config on this computer defines a merge driver (%s), which a merge could run; turn on Full access for remote devices on this computer to %s from the phone.",
		strings.Join(d.mergeDrivers, ", "), action)
}

func uniq(keys []string) []string {
	seen := map[string]bool{}
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// hasSubmodules reports a .gitmodules in the checkout or a modules folder in
// the git folder: a submodule carries its own config, which the gate never
// reads (docs/gate-rules.md, "Submodules"). Two lstats, no cache: a
// .gitmodules that arrived with a pull is seen by the next change.
func (r *Repo) hasSubmodules() bool {
	places := []string{filepath.Join(r.commonDir, "modules"), filepath.Join(r.gitDir, "modules")}
	if r.workTree != "" {
		places = append(places, filepath.Join(r.workTree, ".gitmodules"))
	}
	for _, p := range places {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}
