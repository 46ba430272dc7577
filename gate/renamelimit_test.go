package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// renamedRepo has n files renamed and changed a little, staged: no exact
// rename pairs them, only the exhaustive search, which is O(n²).
func renamedRepo(t *testing.T, n int) string {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("old/f%04d.txt", i)] = fmt.Sprintf("file %d\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n", i)
	}
	dir := gittest.Init(t, files)
	if err := os.Rename(filepath.Join(dir, "old"), filepath.Join(dir, "new")); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		p := filepath.Join(dir, "new", fmt.Sprintf("f%04d.txt", i))
		if err := os.Rename(p, filepath.Join(dir, "new", fmt.Sprintf("g%04d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		write(t, dir, map[string]string{fmt.Sprintf("new/g%04d.txt", i): fmt.Sprintf("file %d\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nchanged\n", i)})
	}
	git(t, dir, "add", "-A")
	return dir
}

// diff.renameLimit=0 (and status.renameLimit=0) is no limit: a repository
// that sets it makes every diff and status run the exhaustive rename
// search over all its files, for as long as the deadline lets it. The
// closed gate forces git's own default, so past 1000 files the search is
// skipped and the files are shown as deleted and added.
func TestRenameLimitIsForced(t *testing.T) {
	gittest.Home(t, "")
	const n = 1001 // 1001² pairs: past the forced 1000² bound
	dir := renamedRepo(t, n)
	git(t, dir, "config", "diff.renameLimit", "0")
	git(t, dir, "config", "status.renameLimit", "0")
	git(t, dir, "config", "merge.renameLimit", "0")
	if got := strings.Count(git(t, dir, "diff", "--cached", "--name-status", "-M"), "\nR"); got != n-1 {
		t.Fatalf("not reproduced: plain git found %d renames, want %d (every one after the first line)", got, n-1)
	}
	r := open(t, dir)
	renames := func(tr trust.Trust) (inDiff, inStatus int) {
		d, err := r.Diff(ctx, tr, trust.Full, DiffOptions{Staged: true})
		if err != nil {
			t.Fatalf("%v: diff: %v", tr, err)
		}
		st, err := r.Status(ctx, tr)
		if err != nil {
			t.Fatalf("%v: status: %v", tr, err)
		}
		for _, f := range st.Files {
			if f.Index == "R" {
				inStatus++
			}
		}
		return strings.Count(d.Diff, "\nrename from "), inStatus
	}
	// The diff is cut at MaxDiff, so it shows only the first renames.
	if d, s := renames(desktop); d == 0 || s != n {
		t.Fatalf("not reproduced through the desktop: %d renames in the diff, %d in status, want some and %d", d, s, n)
	}
	if d, s := renames(closed); d != 0 || s != 0 {
		t.Fatalf("closed gate: %d renames in the diff, %d in status: the search ran past the bound", d, s)
	}
}
