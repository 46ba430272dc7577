package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// A git folder whose info/ (or index) is a link reads, through git and
// through the audit, whatever the link leads to: another folder's
// attributes and exclude, another repository's index. The audit reports
// the link (git-dir-shape) and reads nothing more through the folder:
// plain git shows what it would have read.
func TestAuditReadsNothingThroughALinkedGitFolder(t *testing.T) {
	gittest.Home(t, "")
	prog, marker := gittest.PayloadFile(t)

	t.Run("info", func(t *testing.T) {
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		gittest.Git(t, dir, "config", "filter.evil.clean", prog)
		outside := t.TempDir()
		gittest.Write(t, outside, map[string]string{"attributes": "*.txt filter=evil\n", "exclude": "*.txt\n"})
		link(t, outside, filepath.Join(dir, ".git", "info"))
		if out := gittest.Git(t, dir, "check-attr", "filter", "--", "a.txt"); !strings.Contains(out, "filter: evil") {
			t.Fatalf("not reproduced: plain git read no attributes through the link: %q", out)
		}
		r := run(t, dir)
		if got := rules(r); len(got["git-dir-shape"]) != 1 || len(got["attributes-driver"]) != 0 {
			t.Fatalf("%v", got)
		}
		message(t, r, "git-dir-shape", ".git/info, which is a symlink")
	})

	t.Run("index", func(t *testing.T) {
		other := gittest.Init(t, map[string]string{".env": "S=1\n"})
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		link(t, filepath.Join(other, ".git", "index"), filepath.Join(dir, ".git", "index"))
		if out := gittest.Git(t, dir, "ls-files"); !strings.Contains(out, ".env") {
			t.Fatalf("not reproduced: plain git listed no other index: %q", out)
		}
		r := run(t, dir)
		got := rules(r)
		if len(got["git-dir-shape"]) != 1 || len(got["secret-tracked"]) != 0 || len(got["secret-file"]) != 0 {
			t.Fatalf("%v", got)
		}
		message(t, r, "git-dir-shape", ".git/index, which is a symlink")
	})

	t.Run("secrets on the tree are still found", func(t *testing.T) {
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n", "deploy/.env": "S=1\n"})
		link(t, t.TempDir(), filepath.Join(dir, ".git", "info"))
		if got := rules(run(t, dir)); strings.Join(got["secret-file"], ",") != "deploy/.env" {
			t.Fatalf("%v", got)
		}
	})
	if gittest.Fired(marker) {
		t.Fatal("the audit ran the filter")
	}
}

func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.RemoveAll(name); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

func message(t *testing.T, r *Report, rule, part string) {
	t.Helper()
	for _, f := range r.Findings {
		if f.Rule == rule && strings.Contains(f.Message, part) {
			return
		}
	}
	t.Fatalf("no %s finding saying %q: %+v", rule, part, r.Findings)
}
