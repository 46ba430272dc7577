package fsguard

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// On HFS+ (a Mac's external disk) ".g\u200cit" opens .git: the file system
// leaves some code points out of a name. git refuses such a path in its
// index with core.protectHFS (is_hfs_dotgit); IsGitName must refuse exactly
// what git refuses there, asked of real git for every code point git's
// list names, at every place in ".git", and for look-alikes git lets
// through (which are other names, on HFS+ too).
func TestGitNameAgreesWithGitOnHFS(t *testing.T) {
	gittest.Home(t, "")
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := run("init", "-q"); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	blob, err := run("hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	gitRefuses := func(seg string) bool {
		_, err := run("-c", "core.protectHFS=true", "-c", "core.protectNTFS=false", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+seg+"/config")
		return err != nil
	}
	var names []string
	for _, r := range []rune{0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff,
		0x200b, 0x2060, 0x00a0, 0x00ad, 0x180e, 0x2061, 0x2066, 0x2069, 0xfe0f} { // and look-alikes git lets through
		for i := 0; i <= len(".git"); i++ {
			names = append(names, ".git"[:i]+string(r)+".git"[i:])
		}
	}
	names = append(names, ".GIT", ".Git\u200d", "\ufeff.git", ".gi\u200bt")
	refused := 0
	for _, name := range names {
		git := gitRefuses(name)
		if got := IsGitName(name); got != git {
			t.Errorf("%q: IsGitName %v, git with core.protectHFS refuses it: %v", name, got, git)
		}
		if git {
			refused++
		}
	}
	if refused < 16*5 {
		t.Fatalf("git refused only %d of the names: this git does not check HFS names as the test expects", refused)
	}
}
