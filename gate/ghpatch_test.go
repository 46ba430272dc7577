package gate

import (
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
)

// A pull request's patch cut into files goes through the same rule as
// FilterPatch: below full a secret file is left out under any of its names
// (a rename away from .env, a quoted name), a section whose names cannot be
// read is left out for everyone, and full sees every readable section; the
// counts come from the hunks only, so a deleted line "-- x" is no header.
func TestPatchFilesHideAsFilterPatch(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	r := open(t, dir)
	patch := []byte("diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,2 +1 @@\n--- x\n-y\n+z\n" +
		"diff --git a/.env b/notes.txt\nsimilarity index 90%\nrename from .env\nrename to notes.txt\n--- a/.env\n+++ b/notes.txt\n@@ -1 +1 @@\n-TOKEN=a\n+TOKEN=b\n" +
		"diff --git \"a/.env\" \"b/.env\"\n--- \"a/.env\"\n+++ \"b/.env\"\n@@ -1 +1 @@\n-A=1\n+A=2\n" +
		"diff --git a/x b/y c\n--- weird\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n")
	names := func(fs []PatchFile) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		return out
	}
	gh, err := r.GH(ctx, trust.Phone(false), false, "see a pull request's diff")
	if err != nil {
		t.Fatal(err)
	}
	full, hiddenFull := gh.PatchFiles(trust.Full, patch)
	if !slices.Equal(names(full), []string{"README.md", "notes.txt", ".env", "gone.txt"}) || hiddenFull != 1 {
		t.Fatalf("full: %v, %d hidden", names(full), hiddenFull)
	}
	if f := full[0]; f.Added != 1 || f.Deleted != 2 || f.Status != "modified" {
		t.Fatalf("README.md: %+v", f)
	}
	if f := full[1]; f.Status != "renamed" || f.OldPath != ".env" {
		t.Fatalf("the rename: %+v", f)
	}
	if f := full[3]; f.Status != "deleted" || f.Deleted != 1 || f.OldPath != "" {
		t.Fatalf("the deletion: %+v", f)
	}
	view, hiddenView := gh.PatchFiles(trust.View, patch)
	if !slices.Equal(names(view), []string{"README.md", "gone.txt"}) || hiddenView != 3 {
		t.Fatalf("view: %v, %d hidden", names(view), hiddenView)
	}
}
