package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

var (
	desktop = trust.Desktop()
	closed  = trust.Phone(false)
	phoneOn = trust.Phone(true)
	ctx     = context.Background()
)

// open opens dir as a served Repo (also serving extra checkouts, for linked
// worktrees).
func open(t testing.TB, dir string, served ...string) *Repo {
	t.Helper()
	r, err := tryOpen(t, dir, served...)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return r
}

func tryOpen(t testing.TB, dir string, served ...string) (*Repo, error) {
	t.Helper()
	root, err := fsguard.OpenRoot(dir, fsguard.Options{Home: "/nonexistent-home"})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { root.Close() })
	var canon []string
	for _, s := range append([]string{dir}, served...) {
		c, err := filepath.EvalSymlinks(s)
		if err != nil {
			return nil, err
		}
		canon = append(canon, c)
	}
	r, err := Open(root, Options{Served: canon, Timeout: 20 * time.Second})
	if err == nil {
		t.Cleanup(func() { r.Close() })
	}
	return r, err
}

// wantRefusal checks err is the refusal want and that its sentence holds
// each of parts and no local path.
func wantRefusal(t testing.TB, err, want error, parts ...string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
	s := refusal.Sentence(err)
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("sentence %q lacks %q", s, p)
		}
	}
	if strings.Contains(s, "/tmp") || strings.Contains(s, os.TempDir()) {
		t.Errorf("sentence %q holds a local path", s)
	}
}

func write(t testing.TB, dir string, files map[string]string) { gittest.Write(t, dir, files) }
func git(t testing.TB, dir string, args ...string) string     { return gittest.Git(t, dir, args...) }

func read(t testing.TB, path string) string { return gittest.Read(t, path) }

func mkfifo(path string) error { return unix.Mkfifo(path, 0o644) }

// requireGit skips a case that needs git major.minor or later: the key or
// behaviour it attacks does not exist before.
func requireGit(t *testing.T, major, minor int, what string) {
	t.Helper()
	var a, b int
	out := git(t, "", "version")
	if _, err := fmt.Sscanf(strings.TrimPrefix(out, "git version "), "%d.%d", &a, &b); err != nil {
		t.Fatalf("git version %q", out)
	}
	if a < major || a == major && b < minor {
		t.Skipf("%s needs git %d.%d or later; this is %s", what, major, minor, strings.TrimSpace(out))
	}
}

// seen is the operation in progress a device reads before it concludes or
// aborts: git.conflicts's op and id.
func seen(t *testing.T, r *Repo, tr trust.Trust) Expected {
	t.Helper()
	c, err := r.Conflicts(ctx, tr, trust.Full)
	if err != nil {
		t.Fatal(err)
	}
	return Expected{Op: c.Op, ID: c.ID}
}

// amendSeen is the last commit a device reads before it amends:
// git.canAmend's oid and branch.
func amendSeen(t *testing.T, r *Repo) AmendTarget {
	t.Helper()
	a, err := r.CanAmend(ctx, closed)
	if err != nil {
		t.Fatal(err)
	}
	return AmendTarget{OID: a.OID, Branch: a.Branch}
}
