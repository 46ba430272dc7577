package gate

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// Found by review: git writes "diff --cc NAME" for a merge that differs from every
// parent and for an unmerged path, and the splitter once started a section
// only at "diff --git": the secret rode in the file before it, or in the
// unfiltered head, to a view phone. Each case first shows the secret
// reaching the desktop (and the full grant), then hidden from view and
// counted.

// conflictedSecret is a checkout in the middle of a merge that conflicts on
// .env, with one clean change beside it.
func conflictedSecret(t *testing.T) string {
	t.Helper()
	d := conflict(t, map[string][2]string{".env": {"SECRET=main-marker\n", "SECRET=side-marker\n"}})
	write(t, d, map[string]string{"README.md": "changed\n"})
	return d
}

func TestDiffHidesAnUnmergedSecret(t *testing.T) {
	gittest.Home(t, "")
	d := conflictedSecret(t)
	if out := gitDiff(t, d); !strings.Contains(out, "diff --cc .env") || !strings.Contains(out, "SECRET=side-marker") {
		t.Fatalf("git no longer writes diff --cc for an unmerged path:\n%s", out)
	}
	r := open(t, d)
	for _, g := range []struct {
		t trust.Trust
		g trust.Grant
	}{{desktop, trust.View}, {closed, trust.Full}} {
		got, err := r.Diff(ctx, g.t, g.g, DiffOptions{})
		if err != nil || !strings.Contains(got.Diff, "SECRET=side-marker") {
			t.Fatalf("not reproduced: %v grant %v does not see the unmerged secret: %+v %v", g.t, g.g, got, err)
		}
	}
	got, err := r.Diff(ctx, closed, trust.View, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.Diff, "SECRET") || strings.Contains(got.Diff, "diff --cc .env") || got.HiddenSecrets != 1 {
		t.Fatalf("view sees the unmerged secret or did not count it: %+v", got)
	}
	if !strings.Contains(got.Diff, "+changed") {
		t.Fatalf("the clean change is gone too: %q", got.Diff)
	}
	// Status names the unmerged secret (names are not secret) and carries
	// no content.
	st, err := r.Status(ctx, closed)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range st.Files {
		found = found || f.Path == ".env" && f.Index == "U" && f.Worktree == "U"
	}
	if !found {
		t.Fatalf("status lacks the unmerged .env: %+v", st.Files)
	}
}

func TestShowHidesACombinedSecret(t *testing.T) {
	gittest.Home(t, "")
	d := conflict(t, map[string][2]string{".env": {"SECRET=main-marker\n", "SECRET=side-marker\n"}, "a.txt": {"main\n", "side\n"}})
	mergeCommit(t, d, map[string]string{".env": "SECRET=merged-marker\n", "a.txt": "merged\n"})
	oid := strings.TrimSpace(git(t, d, "rev-parse", "HEAD"))
	parents := strings.Fields(git(t, d, "rev-parse", "HEAD^1", "HEAD^2"))
	r := open(t, d)
	for _, g := range []struct {
		t trust.Trust
		g trust.Grant
	}{{desktop, trust.View}, {closed, trust.Full}} {
		got, err := r.Show(ctx, g.t, g.g, oid, "")
		if err != nil || !strings.Contains(got.Diff, "diff --cc .env") || !strings.Contains(got.Diff, "SECRET=merged-marker") {
			t.Fatalf("not reproduced: %v grant %v does not see the merge's secret: %+v %v", g.t, g.g, got, err)
		}
	}
	got, err := r.Show(ctx, closed, trust.View, oid, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.Diff, "SECRET") || got.HiddenSecrets != 1 {
		t.Fatalf("view sees the merge's secret or did not count it: %+v", got)
	}
	if !strings.Contains(got.Diff, "diff --cc a.txt") || !strings.Contains(got.Diff, "++merged") {
		t.Fatalf("the merge's other file is gone: %q", got.Diff)
	}
	if !got.Combined || strings.Join(got.Parents, " ") != strings.Join(parents, " ") {
		t.Fatalf("show does not say it is a combined diff of %v: %+v", parents, got)
	}
	// A plain commit says it is not combined, with its one parent.
	first, err := r.Show(ctx, closed, trust.View, parents[0], "")
	if err != nil || first.Combined || len(first.Parents) != 1 {
		t.Fatalf("plain commit: %+v %v", first, err)
	}
}

// A merge that renames .env to notes.txt shows the parents' lines, secret
// included, under notes.txt; only --combined-all-paths names .env in the
// header, so Show always passes it.
func TestShowHidesASecretRenamedInAMerge(t *testing.T) {
	gittest.Home(t, "")
	d := renamedMerge(t)
	plain := git(t, d, "show", "--format=", "--find-renames", "--no-color", "HEAD")
	if _, secs := readSections(plain); !strings.Contains(plain, "--SECRET=parents") || len(secs) != 1 || secs[0].names != "notes.txt" {
		t.Fatalf("not reproduced: without --combined-all-paths the header should name only notes.txt while the secret shows:\n%s", plain)
	}
	oid := strings.TrimSpace(git(t, d, "rev-parse", "HEAD"))
	r := open(t, d)
	if got, err := r.Show(ctx, desktop, trust.View, oid, ""); err != nil || !strings.Contains(got.Diff, "SECRET=parents") {
		t.Fatalf("not reproduced: the desktop does not see the parents' secret: %+v %v", got, err)
	}
	got, err := r.Show(ctx, closed, trust.View, oid, "")
	if err != nil || strings.Contains(got.Diff, "SECRET") || got.HiddenSecrets != 1 {
		t.Fatalf("view sees the renamed secret or did not count it: %+v %v", got, err)
	}
}
