package github

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/leakcheck"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// The tests fail if a process they started (a gh, or its git) outlives
// them.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

var (
	desktop = trust.Desktop()
	closed  = trust.Phone(false)
	ctx     = context.Background()
)

// repoWith builds a checkout with one commit, then applies local config
// (key value pairs).
func repoWith(t *testing.T, files map[string]string, config ...string) string {
	t.Helper()
	return gittest.InitConfig(t, files, config...)
}

// dirty changes a tracked file so status must read it: the same size with
// other content, so git cannot tell from the size alone and runs the file
// through its clean filter to compare.
func dirty(t *testing.T, dir string) {
	t.Helper()
	write(t, dir, map[string]string{"a.txt": "b\n"})
}

// wantRefusal checks err is the refusal want and that its sentence holds
// no local path.
func wantRefusal(t testing.TB, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
	if s := refusal.Sentence(err); strings.Contains(s, "/tmp") || strings.Contains(s, os.TempDir()) {
		t.Errorf("sentence %q holds a local path", s)
	}
}

func write(t testing.TB, dir string, files map[string]string) { gittest.Write(t, dir, files) }
func git(t testing.TB, dir string, args ...string) string     { return gittest.Git(t, dir, args...) }

func read(t testing.TB, path string) string { return gittest.Read(t, path) }
