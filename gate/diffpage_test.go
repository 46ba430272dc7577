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

// manyChanges builds a checkout with n changed tracked files, a secret
// among them, one untracked file and one untracked secret.
func manyChanges(t *testing.T, n int) string {
	t.Helper()
	files := map[string]string{".env": "A=1\n"}
	for i := range n {
		files[fmt.Sprintf("src/f%03d.txt", i)] = "old\n"
	}
	dir := gittest.Init(t, files)
	changed := map[string]string{".env": "A=2\n", "new.txt": "brand new\n", "id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n"}
	for i := range n {
		changed[fmt.Sprintf("src/f%03d.txt", i)] = fmt.Sprintf("new %d\nmore\n", i)
	}
	write(t, dir, changed)
	return dir
}

// allPages reads every page of the whole diff.
func allPages(t *testing.T, r *Repo, tr trust.Trust, g trust.Grant, staged bool, limit int) ([]DiffFile, *DiffPage) {
	t.Helper()
	var files []DiffFile
	var first *DiffPage
	for offset, pages := 0, 0; ; pages++ {
		p, err := r.DiffPage(ctx, tr, g, DiffPageOptions{Staged: staged, Offset: offset, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = p
		}
		if len(p.Files) == 0 && p.Total > 0 || pages > p.Total {
			t.Fatalf("page at %d: %d files of %d", offset, len(p.Files), p.Total)
		}
		files = append(files, p.Files...)
		if p.Next == 0 {
			return files, first
		}
		offset = p.Next
	}
}

// TestDiffPageMatchesGit: the pages add up to git diff's files, each file's
// section exactly git's, with its counts; the untracked file previewed
// after them; the secrets left out and counted below full, shown at full.
func TestDiffPageMatchesGit(t *testing.T) {
	gittest.Home(t, "")
	dir := manyChanges(t, 45)
	r := open(t, dir)
	files, first := allPages(t, r, closed, trust.View, false, 10)
	if first.Total != 46 || len(files) != 46 || first.HiddenSecrets != 2 {
		t.Fatalf("total %d, %d files, hidden %d", first.Total, len(files), first.HiddenSecrets)
	}
	whole := git(t, dir, "diff", "--no-renames", "--no-color")
	for i, f := range files[:45] {
		name := fmt.Sprintf("src/f%03d.txt", i)
		if f.Path != name || f.Added != 2 || f.Deleted != 1 || f.Untracked {
			t.Errorf("file %d: %+v", i, f)
		}
		if !strings.Contains(whole, f.Diff) || !strings.HasPrefix(f.Diff, "diff --git a/"+name) {
			t.Errorf("%s: not git's section: %q", name, f.Diff)
		}
	}
	if last := files[45]; last.Path != "new.txt" || !last.Untracked || last.Added != 1 || !strings.Contains(last.Diff, "+brand new") {
		t.Errorf("untracked: %+v", last)
	}
	for _, f := range files {
		if f.Path == ".env" || f.Path == "id_rsa" || strings.Contains(f.Diff, "A=2") || strings.Contains(f.Diff, "PRIVATE") {
			t.Fatalf("a secret below full: %+v", f)
		}
	}
	full, fp := allPages(t, r, closed, trust.Full, false, 100)
	if fp.Total != 48 || fp.HiddenSecrets != 0 || full[0].Path != ".env" || !strings.Contains(full[0].Diff, "+A=2") || !full[0].Secret || full[1].Secret {
		t.Fatalf("full: total %d, hidden %d, first %+v", fp.Total, fp.HiddenSecrets, full[0])
	}
	// The index's side: nothing staged, then one file.
	if p, err := r.DiffPage(ctx, closed, trust.View, DiffPageOptions{Staged: true}); err != nil || p.Total != 0 {
		t.Fatalf("staged: %+v %v", p, err)
	}
	git(t, dir, "add", "src/f001.txt")
	p, err := r.DiffPage(ctx, closed, trust.View, DiffPageOptions{Staged: true})
	if err != nil || p.Total != 1 || p.Files[0].Path != "src/f001.txt" || p.Files[0].Diff != git(t, dir, "diff", "--cached", "--no-color") {
		t.Fatalf("staged: %+v %v", p, err)
	}
}

// TestDiffPageBounded: a change of big files arrives a few files a page,
// each page within the diff bound, a file bigger than it cut.
func TestDiffPageBounded(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	big := strings.Repeat("a long line of text for the diff\n", 3000) // ~100 KiB
	write(t, dir, map[string]string{"a.txt": big, "b.txt": big, "c.txt": big + big})
	r := open(t, dir)
	files, first := allPages(t, r, closed, trust.View, false, 100)
	if len(files) != 3 || first.Next == 0 || len(first.Files) == 3 {
		t.Fatalf("%d files, first page %d, next %d", len(files), len(first.Files), first.Next)
	}
	if !files[2].Truncated || len(files[2].Diff) > MaxDiff || files[0].Truncated {
		t.Fatalf("cut: %v %d %v", files[2].Truncated, len(files[2].Diff), files[0].Truncated)
	}
}

// TestDiffPageHidesHardLinks: a changed file hard-linked elsewhere is left
// out for a device and counted, as git.diff does; the desktop sees it.
func TestDiffPageHidesHardLinks(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"notes.txt": "x\n", "a.txt": "a\n"})
	outside := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(outside, []byte("PRIVATE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	if p, err := r.DiffPage(ctx, desktop, trust.Full, DiffPageOptions{}); err != nil || p.Total != 1 || !strings.Contains(p.Files[0].Diff, "PRIVATE") {
		t.Fatalf("not reproduced: the desktop's diff %+v %v", p, err)
	}
	p, err := r.DiffPage(ctx, closed, trust.Full, DiffPageOptions{})
	if err != nil || p.Total != 0 || p.HiddenSecrets != 1 {
		t.Fatalf("device: %+v %v", p, err)
	}
}

// TestDiffPageMarksFiltered: a file whose filter driver the closed gate
// switches off is listed as filtered with no diff, and the driver's
// program never runs; the desktop's diff runs it.
func TestDiffPageMarksFiltered(t *testing.T) {
	gittest.Home(t, "")
	prog, marker := gittest.PayloadFile(t)
	dir := repoWith(t, map[string]string{"a.bin": "x\n", "b.txt": "b\n", ".gitattributes": "*.bin filter=lfs\n"}, "filter.lfs.clean", prog)
	write(t, dir, map[string]string{"a.bin": "yy\n", "b.txt": "c\n"})
	r := open(t, dir)
	if _, err := r.DiffPage(ctx, desktop, trust.Full, DiffPageOptions{}); err != nil {
		t.Fatal(err)
	}
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: the desktop's diff ran no clean filter")
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	p, err := r.DiffPage(ctx, closed, trust.View, DiffPageOptions{})
	if err != nil || p.Total != 2 || !p.Files[0].Filtered || p.Files[0].Diff != "" || p.Files[1].Filtered {
		t.Fatalf("%+v %v", p, err)
	}
	if gittest.Fired(marker) {
		t.Fatal("the closed diff ran the clean filter")
	}
}
