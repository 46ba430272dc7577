package gate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
)

// Options say how to run git for a checkout.
type Options struct {
	// Git is the git binary; "" means "git" looked up on PATH when the
	// checkout is opened.
	Git string
	// Served lists the canonical paths of the checkouts gatehouse serves. A
	// linked worktree (a .git file with "gitdir:") is accepted only when it
	// belongs to one of them: its metadata is the repository's own word,
	// which is not enough on its own.
	Served []string
	// Timeout, when set, caps every git call's deadline (each operation has
	// its own, up to a few minutes for a push). Tests use a short one.
	Timeout time.Duration
	// Home, when set, is the HOME git runs with instead of gatehouse's own:
	// the regression runner gives each case a home of its own, so no global
	// config of the person running it takes part.
	Home string
	// MemoryLimitMiB bounds the address space (RLIMIT_AS) of every git
	// process the closed gate starts; 0 means DefaultMemoryLimitMiB, and
	// less than MinMemoryLimitMiB reads as the minimum.
	MemoryLimitMiB int
	// GH is the gh binary for the GitHub methods; "" means "gh" on PATH.
	GH string
	// Budget bounds the memory of every closed child at once, across all
	// checkouts served (budget.go); nil shares this process's default.
	Budget *MemoryBudget
	// WallProofs, when set, keeps the kernel wall's self-test answer
	// between processes, so a short-lived one ('gatehouse do') does not
	// run it at every start. nil: the self-test runs once per process.
	WallProofs WallProofs
	// Monitor is the program git runs as the status monitor's hook while
	// a watcher covers the checkout (fsmonitor.go): gatehouse's own binary,
	// which answers it (IsMonitorHook). "" means statuses without it.
	Monitor string
	// MonitorFullLook bounds how long the status monitor trusts the
	// watcher alone: past it git looks at everything once, which catches
	// a change no event reports. 0 means 30 seconds.
	MonitorFullLook time.Duration
}

// Repo is one checkout whose git folder has been found and validated. Every
// git process for it starts in run, pinned to these folders.
type Repo struct {
	root      *fsguard.Root
	git       string
	workTree  string // canonical
	gitDir    string // canonical: .git, or the linked worktree's folder in the main .git
	commonDir string // canonical: the main repository's .git
	linked    bool
	memBudget *MemoryBudget // Options.Budget
	maxTime   time.Duration
	home      string
	ghPath    string      // the gh binary (gh.go)
	common    *heldFolder // the common git folder, held open for cheap stats of its files (heldfolder.go)
	wall      wall        // the kernel's confinement and memory bound of closed git children (confine.go)

	change sync.Mutex // one git change at a time per checkout

	mu    sync.Mutex // guards cache
	cache cached

	lists           listCache     // git's untracked and ignored lists while a watcher covers the checkout (listcache.go)
	monitorHook     string        // Options.Monitor (fsmonitor.go)
	monitorFullLook time.Duration // Options.MonitorFullLook
	// monitored counts the statuses run with the status monitor, for tests.
	monitored, monitorPrecise atomic.Uint64
	statusKept                atomic.Uint64 // statuses answered from the kept one

	shape layout // the git folder's shape, as the last walk saw it (layout.go)
	// shapeOffForTest switches the shape check off, so a test can prove the
	// kernel wall holds alone. Only this package's tests can set it.
	shapeOffForTest bool
	// heldFolderForTest keeps deciding from the git folder held open at
	// Open, as gatehouse did before, so a test shows a .git replaced under
	// a running host running on the old folder's decision.
	heldFolderForTest bool
	// userConfigOffForTest decides from the repository's own config only,
	// as gatehouse did before, so a test shows a driver from the user's
	// global config running for a closed call where the kernel wall is off.
	userConfigOffForTest bool
	// filteredOffForTest reads and writes files that go through a
	// switched-off filter as gatehouse did before filtered.go, so a test
	// can show what that gave.
	filteredOffForTest bool
	// userIncludesOffForTest reads only the user's config files whose
	// include conditions hold in the checkout, as gatehouse did before
	// everyUserInclude.
	userIncludesOffForTest bool
	// userEnvOffForTest gives git none of userConfigEnv, as gatehouse did
	// before, so its git did not read a config the user keeps there.
	userEnvOffForTest bool
	// toolOutsideWallsForTest starts gh as gatehouse did before, with a
	// plain start, so a test shows gh (and the git it runs) outside both
	// walls.
	toolOutsideWallsForTest bool

	started atomic.Int64 // git processes started, for tests and doctor
}

// maxMetadata bounds one of git's own small files read by the gate.
const maxMetadata = 4 << 10

// gitBinary is the absolute path of the git the options name (git on
// PATH by default): absolute, because git runs with its own working folder.
func gitBinary(opts Options) (string, error) {
	git := opts.Git
	if git == "" {
		git = "git"
	}
	gitPath, err := exec.LookPath(git)
	if err == nil {
		gitPath, err = filepath.Abs(gitPath)
	}
	if err != nil {
		return "", fmt.Errorf("gate: %w", err)
	}
	return gitPath, nil
}

// Open finds the git folder of the served folder root and validates it: a
// real .git folder inside it, or a .git file whose "gitdir:" leads to a
// linked worktree of a checkout in opts.Served. A symlinked .git, a
// commondir leading elsewhere, and a folder that is not itself a checkout
// (git is never allowed to search parent folders) are refused. What lies
// inside the git folder is checked before each closed call (layout.go).
func Open(root *fsguard.Root, opts Options) (*Repo, error) {
	gitPath, err := gitBinary(opts)
	if err != nil {
		return nil, err
	}
	r := &Repo{root: root, git: gitPath, workTree: root.Path(), maxTime: opts.Timeout, home: opts.Home, ghPath: ghBinary(opts.GH), monitorHook: opts.Monitor, monitorFullLook: opts.MonitorFullLook,
		wall: wall{memory: memoryLimit(opts), proofs: opts.WallProofs}, memBudget: opts.Budget}
	if err := r.locate(opts.Served); err != nil {
		return nil, err
	}
	if r.common, err = openHeld(r.commonDir); err != nil {
		return nil, err
	}
	return r, nil
}

// Close releases the descriptor the Repo holds.
func (r *Repo) Close() error { return r.common.close() }

// locate finds and validates the git folder.
func (r *Repo) locate(served []string) error {
	dotgit := filepath.Join(r.workTree, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ErrNotCheckout
	case err != nil:
		return fmt.Errorf("gate: %w", err)
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%w: .git is a symlink", ErrRedirected)
	case fi.IsDir():
		// A main checkout has no commondir; one planted there would move
		// the repository's refs and config elsewhere.
		if _, err := os.Lstat(filepath.Join(dotgit, "commondir")); err == nil {
			return fmt.Errorf("%w: .git/commondir", ErrRedirected)
		}
		r.gitDir, r.commonDir = dotgit, dotgit
		return nil
	case fi.Mode().IsRegular():
		return r.locateLinked(dotgit, served)
	}
	return ErrNotCheckout
}

// locateLinked validates a linked worktree: .git holds "gitdir: PATH", PATH
// is MAIN/.git/worktrees/NAME with a commondir leading back to MAIN/.git
// and a gitdir file leading back to this .git, and MAIN is served.
func (r *Repo) locateLinked(dotgit string, served []string) error {
	data, err := fsguard.ReadMetadata(dotgit, maxMetadata)
	if err != nil {
		return fmt.Errorf("%w: .git file: %v", ErrRedirected, err)
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return fmt.Errorf("%w: .git file without gitdir", ErrRedirected)
	}
	if !filepath.IsAbs(line) {
		line = filepath.Join(r.workTree, line)
	}
	gitDir, err := filepath.EvalSymlinks(line)
	if err != nil {
		return fmt.Errorf("%w: gitdir: %v", ErrRedirected, err)
	}
	cd, err := fsguard.ReadMetadata(filepath.Join(gitDir, "commondir"), maxMetadata)
	if err != nil {
		return fmt.Errorf("%w: commondir: %v", ErrRedirected, err)
	}
	common := strings.TrimSpace(string(cd))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	if common, err = filepath.EvalSymlinks(common); err != nil {
		return fmt.Errorf("%w: commondir: %v", ErrRedirected, err)
	}
	if filepath.Dir(filepath.Dir(gitDir)) != common || filepath.Base(filepath.Dir(gitDir)) != "worktrees" {
		return fmt.Errorf("%w: gitdir is not a worktree of its common dir", ErrRedirected)
	}
	back, err := fsguard.ReadMetadata(filepath.Join(gitDir, "gitdir"), maxMetadata)
	if err != nil || !sameFileName(strings.TrimSpace(string(back)), filepath.Join(r.workTree, ".git")) {
		return fmt.Errorf("%w: the worktree's gitdir does not lead back here", ErrRedirected)
	}
	for _, s := range served {
		if filepath.Join(s, ".git") == common {
			r.gitDir, r.commonDir, r.linked = gitDir, common, true
			return nil
		}
	}
	return fmt.Errorf("%w: a worktree of a repository gatehouse does not serve", ErrRedirected)
}

func sameFileName(a, b string) bool {
	ca, err1 := filepath.EvalSymlinks(a)
	cb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ca == cb
}

// Root is the served folder the repository works in.
func (r *Repo) Root() *fsguard.Root { return r.root }

// Linked reports whether this checkout is a linked worktree.
func (r *Repo) Linked() bool { return r.linked }

// GitDir is the checkout's own git folder (where its index and HEAD live),
// for a watcher that tells devices the checkout changed. This computer only.
func (r *Repo) GitDir() string { return r.gitDir }

// Hold takes the checkout's change lock for a change made outside git (a
// file saved from a device), or refuses at once while a git change runs.
func (r *Repo) Hold() (func(), error) { return r.lock() }

// HeadBranch names the branch HEAD points at, read from the HEAD file
// without git, for display only ("" when detached or unreadable). No
// decision rests on it.
func (r *Repo) HeadBranch() string {
	data, err := fsguard.ReadMetadata(filepath.Join(r.gitDir, "HEAD"), maxMetadata)
	if err != nil {
		return ""
	}
	name, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref: refs/heads/")
	if !ok || !ValidBranch(name) {
		return ""
	}
	return name
}
