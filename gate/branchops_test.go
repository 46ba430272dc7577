package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// rev is git rev-parse of one name, trimmed.
func rev(t *testing.T, dir, name string) string {
	t.Helper()
	return strings.TrimSpace(git(t, dir, "rev-parse", "--verify", "-q", name))
}

// hasRef reports whether the ref exists, by plain git.
func hasRef(t *testing.T, dir, ref string) bool {
	t.Helper()
	return strings.TrimSpace(git(t, dir, "for-each-ref", "--format=%(refname)", ref)) == ref
}

// withFeature is a checkout on main with a branch feature two commits
// ahead of it.
func withFeature(t *testing.T) string {
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	git(t, dir, "switch", "-q", "-c", "feature")
	for _, c := range []string{"one", "two"} {
		write(t, dir, map[string]string{c + ".txt": c + "\n"})
		git(t, dir, "add", c+".txt")
		git(t, dir, "commit", "-qm", c)
	}
	git(t, dir, "switch", "-q", "main")
	return dir
}

func TestCreateBranch(t *testing.T) {
	gittest.Home(t, "")
	dir := withFeature(t)
	r := open(t, dir)
	head := rev(t, dir, "HEAD")
	oid, err := r.CreateBranch(ctx, closed, "from-head", "", false)
	if err != nil || oid != head || rev(t, dir, "from-head") != head {
		t.Fatalf("from HEAD: %q %v, git says %q", oid, err, rev(t, dir, "from-head"))
	}
	if got := strings.TrimSpace(git(t, dir, "branch", "--show-current")); got != "main" {
		t.Fatalf("creating without switch moved HEAD to %q", got)
	}
	if _, err := r.CreateBranch(ctx, closed, "from-feature", "feature", true); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(git(t, dir, "branch", "--show-current")); got != "from-feature" || rev(t, dir, "HEAD") != rev(t, dir, "feature") {
		t.Fatalf("create and switch: on %q at %s", got, rev(t, dir, "HEAD"))
	}
	if up := git(t, dir, "!", "config", "branch.from-feature.merge"); up != "" {
		t.Fatalf("a branch from a local branch got an upstream: %q", up)
	}
	if _, err := r.CreateBranch(ctx, closed, "from-oid", head[:10], false); err != nil || rev(t, dir, "from-oid") != head {
		t.Fatalf("from an abbreviated id: %v", err)
	}
	wantRefusal(t, func() error { _, err := r.CreateBranch(ctx, closed, "feature", "", false); return err }(), ErrExists, "A branch named feature already exists")
	wantRefusal(t, func() error { _, err := r.CreateBranch(ctx, closed, "x", "nowhere", false); return err }(), ErrUnknownRef)
	wantRefusal(t, func() error { _, err := r.CreateBranch(ctx, closed, "x", "HEAD~1", false); return err }(), ErrUnknownRef)
	wantRefusal(t, func() error { _, err := r.CreateBranch(ctx, closed, "--force", "", false); return err }(), ErrBadRef)
}

// A name shaped like an option is refused by ValidBranch; with that check
// off it still reaches git only after --end-of-options, where git branch
// reads it as a name and refuses it: neither wall needs the other.
func TestBranchNamesNeverBecomeOptions(t *testing.T) {
	gittest.Home(t, "")
	dir := withFeature(t)
	r := open(t, dir)
	before := git(t, dir, "for-each-ref")
	for _, name := range []string{"--force", "-D", "--delete", "-m"} {
		if _, err := r.CreateBranch(ctx, closed, name, "", false); err == nil {
			t.Errorf("CreateBranch(%q) answered", name)
		}
	}
	branchCheckOffForTest.Store(true)
	t.Cleanup(func() { branchCheckOffForTest.Store(false) })
	for _, name := range []string{"--force", "-D", "--delete", "-m"} {
		_, _ = r.CreateBranch(ctx, closed, name, "", false)
		_, _ = r.DeleteBranch(ctx, closed, name, false)
		_ = r.RenameBranch(ctx, closed, name, "renamed")
	}
	if after := git(t, dir, "for-each-ref"); after != before {
		t.Fatalf("option-shaped names changed the refs:\n%s\nthen\n%s", before, after)
	}
}

func TestRenameBranch(t *testing.T) {
	gittest.Home(t, "")
	dir := withFeature(t)
	r := open(t, dir)
	tip := rev(t, dir, "feature")
	if err := r.RenameBranch(ctx, closed, "feature", "topic"); err != nil {
		t.Fatal(err)
	}
	if hasRef(t, dir, "refs/heads/feature") || rev(t, dir, "topic") != tip {
		t.Fatal("feature was not renamed topic")
	}
	// The current branch may be renamed: HEAD follows, nothing is lost.
	if err := r.RenameBranch(ctx, closed, "main", "trunk"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(git(t, dir, "branch", "--show-current")); got != "trunk" {
		t.Fatalf("HEAD is on %q after renaming the current branch", got)
	}
	wantRefusal(t, r.RenameBranch(ctx, closed, "topic", "trunk"), ErrExists, "A branch named trunk already exists")
	wantRefusal(t, r.RenameBranch(ctx, closed, "gone", "x"), ErrUnknownRef)
	if rev(t, dir, "topic") != tip {
		t.Fatal("a refused rename moved topic")
	}
}

func TestDeleteBranch(t *testing.T) {
	gittest.Home(t, "")
	t.Run("current", func(t *testing.T) {
		dir := withFeature(t)
		_, err := open(t, dir).DeleteBranch(ctx, closed, "main", true)
		wantRefusal(t, err, ErrCurrentBranch, "checked out here")
		if !hasRef(t, dir, "refs/heads/main") {
			t.Fatal("the current branch is gone")
		}
	})
	t.Run("checked out in a worktree", func(t *testing.T) {
		dir := withFeature(t)
		git(t, dir, "worktree", "add", "-q", filepath.Join(t.TempDir(), "wt"), "feature")
		_, err := open(t, dir).DeleteBranch(ctx, closed, "feature", true)
		wantRefusal(t, err, ErrBranchInWorktree, "another worktree")
		if !hasRef(t, dir, "refs/heads/feature") {
			t.Fatal("the worktree's branch is gone")
		}
	})
	t.Run("unmerged, then forced", func(t *testing.T) {
		dir := withFeature(t)
		r := open(t, dir)
		tip := rev(t, dir, "feature")
		_, err := r.DeleteBranch(ctx, closed, "feature", false)
		wantRefusal(t, err, ErrBranchNotMerged, "The branch feature has 2 commits not merged into main", "would lose them", tip[:12])
		if rev(t, dir, "feature") != tip {
			t.Fatal("the refused deletion touched the branch")
		}
		got, err := r.DeleteBranch(ctx, closed, "feature", true)
		if err != nil || got.OID != tip || got.Branch != "feature" {
			t.Fatalf("forced: %+v %v", got, err)
		}
		if hasRef(t, dir, "refs/heads/feature") {
			t.Fatal("the forced deletion left the branch")
		}
		// What the reply gives is enough to make it again.
		git(t, dir, "branch", "feature", got.OID)
	})
	t.Run("git's own refusal, without the count", func(t *testing.T) {
		unmergedCheckOffForTest.Store(true)
		t.Cleanup(func() { unmergedCheckOffForTest.Store(false) })
		dir := withFeature(t)
		_, err := open(t, dir).DeleteBranch(ctx, closed, "feature", false)
		wantRefusal(t, err, ErrBranchNotMerged, "not merged anywhere")
		if !hasRef(t, dir, "refs/heads/feature") {
			t.Fatal("git deleted an unmerged branch")
		}
	})
	t.Run("merged", func(t *testing.T) {
		dir := withFeature(t)
		git(t, dir, "merge", "-q", "--ff-only", "feature")
		if _, err := open(t, dir).DeleteBranch(ctx, closed, "feature", false); err != nil {
			t.Fatal(err)
		}
		if hasRef(t, dir, "refs/heads/feature") {
			t.Fatal("the merged branch is still there")
		}
	})
	t.Run("unknown", func(t *testing.T) {
		_, err := open(t, withFeature(t)).DeleteBranch(ctx, closed, "nope", false)
		wantRefusal(t, err, ErrUnknownRef)
	})
}

func TestSwitchRemote(t *testing.T) {
	gittest.Home(t, "")
	remoteSide := func(t *testing.T) string {
		dir := withFeature(t)
		git(t, dir, "remote", "add", "origin", "https://example.invalid/app.git")
		git(t, dir, "update-ref", "refs/remotes/origin/feature", "feature")
		git(t, dir, "update-ref", "refs/remotes/origin/fresh", "feature~1")
		return dir
	}
	t.Run("makes the tracking branch", func(t *testing.T) {
		dir := remoteSide(t)
		local, err := open(t, dir).SwitchRemote(ctx, closed, "origin/fresh")
		if err != nil || local != "fresh" {
			t.Fatalf("%q %v", local, err)
		}
		if got := strings.TrimSpace(git(t, dir, "rev-parse", "--abbrev-ref", "HEAD@{upstream}")); got != "origin/fresh" {
			t.Fatalf("upstream %q", got)
		}
		if rev(t, dir, "HEAD") != rev(t, dir, "feature~1") {
			t.Fatal("HEAD is not at the remote branch")
		}
	})
	t.Run("a local branch at the same commit", func(t *testing.T) {
		dir := remoteSide(t)
		if _, err := open(t, dir).SwitchRemote(ctx, closed, "origin/feature"); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(git(t, dir, "branch", "--show-current")); got != "feature" {
			t.Fatalf("on %q", got)
		}
	})
	t.Run("a local branch elsewhere", func(t *testing.T) {
		dir := remoteSide(t)
		git(t, dir, "update-ref", "refs/remotes/origin/feature", "main")
		tip := rev(t, dir, "feature")
		_, err := open(t, dir).SwitchRemote(ctx, closed, "origin/feature")
		wantRefusal(t, err, ErrBranchElsewhere, "A local branch feature already exists", "Switch to feature instead")
		if rev(t, dir, "feature") != tip || strings.TrimSpace(git(t, dir, "branch", "--show-current")) != "main" {
			t.Fatal("the refusal moved something")
		}
	})
	t.Run("only what git lists", func(t *testing.T) {
		dir := remoteSide(t)
		r := open(t, dir)
		for _, name := range []string{"origin/nope", "feature", "origin/*", "refs/remotes/origin/fresh", "origin/fresh^"} {
			if _, err := r.SwitchRemote(ctx, closed, name); err == nil {
				t.Errorf("SwitchRemote(%q) answered", name)
			}
		}
	})
	t.Run("a remote branch shaped like an option", func(t *testing.T) {
		dir := remoteSide(t)
		git(t, dir, "update-ref", "refs/remotes/origin/--orphan", "feature")
		before := git(t, dir, "for-each-ref")
		_, err := open(t, dir).SwitchRemote(ctx, closed, "origin/--orphan")
		wantRefusal(t, err, ErrBadRef)
		branchCheckOffForTest.Store(true)
		t.Cleanup(func() { branchCheckOffForTest.Store(false) })
		if _, err := open(t, dir).SwitchRemote(ctx, closed, "origin/--orphan"); err == nil {
			t.Fatal("git took --orphan as a branch name")
		}
		if after := git(t, dir, "for-each-ref"); after != before {
			t.Fatalf("refs changed:\n%s\nthen\n%s", before, after)
		}
	})
}

// Branch changes never run hooks, for anyone (as Switch): plain git runs
// them, gatehouse does not.
func TestBranchHooks(t *testing.T) {
	hook := func(name string, setup func(t *testing.T) string) func(t *testing.T, cmd string) string {
		return func(t *testing.T, cmd string) string {
			dir := setup(t)
			if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", name), []byte("#!/bin/sh\nexec '"+cmd+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	remote := func(t *testing.T) string {
		dir := withFeature(t)
		git(t, dir, "remote", "add", "origin", "https://example.invalid/app.git")
		git(t, dir, "update-ref", "refs/remotes/origin/fresh", "feature~1")
		return dir
	}
	rt := "reference-transaction"
	runAttacks(t, []attack{
		{name: "create runs " + rt, build: hook(rt, withFeature),
			op:    func(r *Repo, tr trust.Trust) error { _, err := r.CreateBranch(ctx, tr, "new", "", false); return err },
			plain: func(t *testing.T, dir string) { git(t, dir, "branch", "new") }},
		{name: "create and switch runs post-checkout", build: hook("post-checkout", withFeature),
			op: func(r *Repo, tr trust.Trust) error {
				_, err := r.CreateBranch(ctx, tr, "new", "feature", true)
				return err
			},
			plain: func(t *testing.T, dir string) { git(t, dir, "switch", "-q", "-c", "new", "feature") }},
		{name: "rename runs " + rt, build: hook(rt, withFeature),
			op:    func(r *Repo, tr trust.Trust) error { return r.RenameBranch(ctx, tr, "feature", "topic") },
			plain: func(t *testing.T, dir string) { git(t, dir, "branch", "-m", "feature", "topic") }},
		{name: "delete runs " + rt, build: hook(rt, withFeature),
			op:    func(r *Repo, tr trust.Trust) error { _, err := r.DeleteBranch(ctx, tr, "feature", true); return err },
			plain: func(t *testing.T, dir string) { git(t, dir, "branch", "-D", "feature") }},
		{name: "switch --track runs post-checkout", build: hook("post-checkout", remote),
			op:    func(r *Repo, tr trust.Trust) error { _, err := r.SwitchRemote(ctx, tr, "origin/fresh"); return err },
			plain: func(t *testing.T, dir string) { git(t, dir, "switch", "-q", "--track", "origin/fresh") }},
		{name: "switch --track runs " + rt, build: hook(rt, remote),
			op:    func(r *Repo, tr trust.Trust) error { _, err := r.SwitchRemote(ctx, tr, "origin/fresh"); return err },
			plain: func(t *testing.T, dir string) { git(t, dir, "switch", "-q", "--track", "origin/fresh") }},
	})
}
