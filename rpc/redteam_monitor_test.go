package rpc

// A red team's findings against the status monitor (gate/fsmonitor.go) and
// the status kept between calls, each a test that failed before its fix
// (the commits that added them, then the fix, say what each showed).

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	noErr(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	noErr(t, err)
	_, err = io.Copy(dst, src)
	noErr(t, err)
	noErr(t, dst.Close())
}

// TestRedteamMonitorHookInsideCheckoutRunsRepositoryProgram: the serve
// names its own binary as git's core.fsmonitor program (Options.Monitor,
// cmd/gatehouse/serve.go monitorProgram: os.Executable). Nothing checks
// that this path lies outside the served checkout. A gatehouse developer
// who follows the Makefile (`make build` writes ./gatehouse, which
// .gitignore ignores) and runs `./gatehouse serve .` serves a checkout
// that holds the hook. git overwrites an ignored file on checkout, so a
// branch that tracks a file named `gatehouse` replaces the hook with the
// repository's content; a closed phone's git.switchBranch (or a desk
// pull) puts it there, and the next closed git.status executes it with
// write access to the checkout and its git folder (Landlock allows the
// hook's exact path for execution, whatever file is now there). Here the
// repository's "program" is a copy of touch(1): git runs it as
// `gatehouse 2 TOKEN`, so it makes a file named "2" in the work tree.
func TestRedteamMonitorHookInsideCheckoutRunsRepositoryProgram(t *testing.T) {
	dir, hook := hookBranchCheckout(t)
	tg, _, _ := monitorDir(t, dir, gate.Options{Monitor: hook})
	phone := trust.Phone(false) // Full access off: the closed gate
	ctx := context.Background()
	_, err := tg.Repo.Status(ctx, phone)
	noErr(t, err)
	if all, _ := tg.Repo.MonitoredStatuses(); all != 0 {
		t.Fatal("the status monitor ran with its program inside the served checkout")
	}

	// A phone with a full grant (Full access still off) switches to the
	// branch: git overwrites the ignored hook with the tracked file.
	noErr(t, tg.Repo.Switch(ctx, phone, "contrib"))
	gittest.Write(t, dir, map[string]string{"a.txt": "changed\n"})
	_, _ = tg.Repo.Status(ctx, phone)
	if _, err := os.Stat(filepath.Join(dir, "2")); err == nil {
		t.Fatal("a closed git.status executed the program the repository put at the status monitor's path (it made the file \"2\" in the work tree): Options.Monitor inside the served checkout is not refused")
	}
}

// TestRedteamKeptStatusMissesSymlinkedExcludes: the kept status (and the
// list cache's fingerprint) identify the user's config and excludes files
// with lstat (gate/listcache.go listIdentity). A dotfiles manager (stow,
// chezmoi symlink mode, home-manager) makes ~/.config/git/ignore and
// ~/.gitconfig symlinks into a dotfiles folder; an edit of the target
// changes nothing lstat sees, no event reaches the watcher, and the git
// folder does not change, so the phone is given the old answer again for
// as long as nothing else changes. Here a pattern is taken out of the
// global ignore: plain git status now shows the untracked file, the
// monitored one never does.
func TestRedteamKeptStatusMissesSymlinkedExcludes(t *testing.T) {
	tg, plain, _, dir := monitoredTarget(t, map[string]string{"a/x.go": "x\n"})
	// The target stays inside ~/.config/git, which the kernel wall lets
	// git read (a target outside it, as stow makes, is refused by the
	// wall and every closed status fails instead).
	dotfiles := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "profiles")
	noErr(t, os.MkdirAll(dotfiles, 0o755))
	target := filepath.Join(dotfiles, "work-ignore")
	noErr(t, os.WriteFile(target, []byte("*.tmp\n"), 0o644))
	noErr(t, os.Symlink(target, filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "ignore")))
	gittest.Write(t, dir, map[string]string{"notes.tmp": "n\n"})
	keptOnce(t, tg, plain, dir)

	noErr(t, os.WriteFile(target, []byte("\n"), 0o644)) // the user's editor, through the symlink
	// Stale until any other change: a later git run (after any event)
	// sees it, as git's untracked cache checks the excludes file's stat
	// through the link.
	sameStatus(t, tg, plain, "*.tmp taken out of the symlinked global ignore file")
}

// TestRedteamStatusMissesNestedRepositoryBecomingOne: whether a folder is
// a nested repository (git status shows it as one untracked "nested/"
// entry instead of its files) depends on what its .git folder holds; the
// watcher never watches inside a .git folder (watchNew skips it), and
// filling one changes neither the folder's own stat nor any watched
// folder. So after `mkdir nested/.git` the answer lists nested's files;
// `git init nested` then makes it a repository, plain git shows "nested/",
// and the monitored status keeps listing the files: first from the kept
// answer, then (after any unrelated change) from git's own untracked
// cache in the index copy, which trusts nested/'s unchanged stat. Both
// are asked: right after git init, and after an unrelated change since.
func TestRedteamStatusMissesNestedRepositoryBecomingOne(t *testing.T) {
	for _, thenWrite := range []bool{false, true} {
		tg, plain, _, dir := monitoredTarget(t, map[string]string{"a/x.go": "x\n"})
		settled(t, tg, plain, dir)
		gittest.Write(t, dir, map[string]string{"nested/file.txt": "f\n"})
		noErr(t, os.Mkdir(filepath.Join(dir, "nested", ".git"), 0o755))
		sameStatus(t, tg, plain, "a folder with an empty .git folder")
		gittest.Git(t, filepath.Join(dir, "nested"), "init", "-q")
		step := "git init in it"
		if thenWrite {
			gittest.Write(t, dir, map[string]string{"a/x.go": "changed\n"})
			step += ", then a tracked file written"
		}
		sameStatus(t, tg, plain, step)
	}
}

// TestRedteamStatusMissesWriteInotifyDoesNotReport: the status monitor
// tells git "only these paths changed", and git then trusts every other
// entry's fsmonitor-valid bit without an lstat. That is only as true as
// inotify: it reports a write to the folder the writer opened the file
// through, never a write through another name (a hard link elsewhere), a
// write through a shared mapping, or a change made by another machine on
// a network or shared file system (NFS, SMB, 9p and virtiofs shares: WSL's
// /mnt/c, VM and container shares). shapewatch.go refuses to vouch for a
// git folder on such a file system (localFileSystems); the status monitor
// applies no such rule to the work tree. Here a tracked file is written
// through a hard link outside the checkout: plain git shows it modified,
// the monitored status never does (not only the kept answer: git itself
// is told nothing changed), until the user's index changes.
func TestRedteamStatusMissesWriteInotifyDoesNotReport(t *testing.T) {
	for _, c := range []struct {
		fullLook time.Duration
		seen     bool
	}{{time.Hour, false}, {time.Nanosecond, true}} {
		tg, plain, _, dir := monitoredTargetWith(t, map[string]string{"a/x.go": "x\n", "b/y.go": "y\n"}, gate.Options{MonitorFullLook: c.fullLook})
		outside := t.TempDir()
		noErr(t, os.Link(filepath.Join(dir, "a", "x.go"), filepath.Join(outside, "x.go")))
		// Its times an hour back: not racily clean for git, so git
		// trusts what it is told of it (and a test need not wait).
		hourAgo := time.Now().Add(-time.Hour)
		noErr(t, os.Chtimes(filepath.Join(dir, "a", "x.go"), hourAgo, hourAgo))
		if c.fullLook > time.Second {
			settled(t, tg, plain, dir) // git told of changes only, from here
		}
		noErr(t, os.WriteFile(filepath.Join(outside, "x.go"), []byte("changed elsewhere\n"), 0o644))
		gittest.Write(t, dir, map[string]string{"b/y.go": "y2\n"}) // an unrelated change: git runs
		got, err := tg.Repo.Status(context.Background(), closedPhone)
		noErr(t, err)
		seen := false
		for _, f := range got.Files {
			seen = seen || f.Path == "a/x.go"
		}
		if seen != c.seen {
			t.Fatalf("with a full look every %v, the write through another name seen: %t", c.fullLook, seen)
		}
		if c.seen {
			sameStatus(t, tg, plain, "a/x.go written through another name")
		}
	}
}

// TestRedteamStatusMissesFoldersWithGitLikeNames: the watcher leaves out
// every folder fsguard.IsGitName calls a .git name (Root.Folders,
// watchNew): ".git" in any case, with trailing dots or spaces, "git~1",
// anything before an NTFS ':' stream, and names with HFS-ignorable code
// points (".g\u200cit"). On Linux git treats all of these but ".git" as
// ordinary folders: it lists their files as untracked, and it lets a
// repository track ".g\u200cit/..." (core.protectHFS is off off macOS).
// Nothing in them is ever named to git, which trusts their entries and
// their untracked-cache entries, so their changes are never shown.
func TestRedteamStatusMissesFoldersWithGitLikeNames(t *testing.T) {
	zwnj := ".g\u200cit"
	tg, plain, _, dir := monitoredTarget(t, map[string]string{zwnj + "/tracked.txt": "t\n", "a/x.go": "x\n"})
	noErr(t, os.MkdirAll(filepath.Join(dir, "git~1"), 0o755))
	noErr(t, os.MkdirAll(filepath.Join(dir, ".GIT"), 0o755))
	if out := gittest.Git(t, dir, "ls-files"); out == "" {
		t.Fatal("setup: nothing tracked")
	}
	sameStatus(t, tg, plain, "folders with .git-like names")

	gittest.Write(t, dir, map[string]string{
		zwnj + "/tracked.txt": "changed\n",   // a tracked file in a folder git calls ordinary
		"git~1/new.txt":       "untracked\n", // untracked files git lists
		".GIT/new.txt":        "untracked\n",
		"a/x.go":              "y\n", // an unrelated change: git runs
	})
	sameStatus(t, tg, plain, "files written in folders with .git-like names")
}

// keptOnce settles the monitor and has it give an answer again.
func keptOnce(t *testing.T, tg, plain *Target, dir string) {
	t.Helper()
	for range 2000 {
		settled(t, tg, plain, dir)
		before := tg.Repo.KeptStatuses()
		sameStatus(t, tg, plain, "nothing")
		if tg.Repo.KeptStatuses() > before {
			return
		}
	}
	t.Fatal("no answer was ever kept")
}
