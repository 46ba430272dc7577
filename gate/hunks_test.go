package gate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// twoHunks is a 30-line file whose line 2 and line 28 change: two hunks.
func twoHunks(t *testing.T) (dir string, r *Repo) {
	t.Helper()
	gittest.Home(t, "")
	var old, cur []string
	for i := 1; i <= 30; i++ {
		old = append(old, "line "+strconv.Itoa(i))
		cur = append(cur, "line "+strconv.Itoa(i))
	}
	cur[1], cur[27] = "FIRST change", "SECOND change"
	cur = append(cur[:3], append([]string{"added a", "added b"}, cur[3:]...)...) // the first hunk grows the file
	dir = gittest.Init(t, map[string]string{"a.txt": strings.Join(old, "\n") + "\n"})
	write(t, dir, map[string]string{"a.txt": strings.Join(cur, "\n") + "\n"})
	return dir, open(t, dir)
}

func hashOf(t *testing.T, r *Repo, tr trust.Trust, g trust.Grant, path string, staged bool) string {
	t.Helper()
	d, err := r.Diff(ctx, tr, g, DiffOptions{Path: path, Staged: staged})
	if err != nil {
		t.Fatal(err)
	}
	if d.Hash != diffHash(d.Diff) || d.Hash == "" {
		t.Fatalf("hash %q does not name the diff returned", d.Hash)
	}
	return d.Hash
}

// TestStageHunksStagesOnlyTheChosenHunkAndUnstagesIt: of two hunks, the
// second alone reaches the index (git diff --cached shows only it), and
// unstaging it from the staged diff leaves the index as HEAD.
func TestStageHunksStagesOnlyTheChosenHunkAndUnstagesIt(t *testing.T) {
	dir, r := twoHunks(t)
	if n := strings.Count(git(t, dir, "diff"), "\n@@ "); n != 2 {
		t.Fatalf("fixture has %d hunks, want 2", n)
	}
	h := hashOf(t, r, closed, trust.Control, "a.txt", false)
	res, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{1}, Hash: h})
	if err != nil || res.Count != 1 {
		t.Fatalf("stage hunk 1: %+v, %v", res, err)
	}
	staged := git(t, dir, "diff", "--cached")
	if !strings.Contains(staged, "+SECOND change") || strings.Contains(staged, "FIRST") || strings.Contains(staged, "added a") {
		t.Fatalf("staged:\n%s", staged)
	}
	if left := git(t, dir, "diff"); !strings.Contains(left, "+FIRST change") || strings.Contains(left, "SECOND") {
		t.Fatalf("left unstaged:\n%s", left)
	}

	// Unstage it again, by its position in the staged diff.
	h = hashOf(t, r, closed, trust.Control, "a.txt", true)
	if _, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{0}, Hash: h, Staged: true}); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "diff", "--cached"); out != "" {
		t.Fatalf("after unstaging the index still differs:\n%s", out)
	}
	if n := strings.Count(git(t, dir, "diff"), "\n@@ "); n != 2 {
		t.Fatalf("work tree diff has %d hunks after the round trip, want 2", n)
	}

	// The first hunk alone (it moves the second's lines), then the second
	// after it, by their positions in the diff as it then stands.
	h = hashOf(t, r, closed, trust.Control, "a.txt", false)
	if _, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{0}, Hash: h}); err != nil {
		t.Fatal(err)
	}
	h = hashOf(t, r, closed, trust.Control, "a.txt", false)
	if _, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{0}, Hash: h}); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "diff"); out != "" {
		t.Fatalf("both hunks staged one by one, yet the work tree differs:\n%s", out)
	}
	// Unstage the second of the two staged hunks only: the first stays.
	h = hashOf(t, r, closed, trust.Control, "a.txt", true)
	if _, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{1}, Hash: h, Staged: true}); err != nil {
		t.Fatal(err)
	}
	if staged := git(t, dir, "diff", "--cached"); !strings.Contains(staged, "+FIRST change") || strings.Contains(staged, "SECOND") {
		t.Fatalf("staged after unstaging the second:\n%s", staged)
	}
}

// TestStageHunksRefusesAChangedFile: the file changes between the view and
// the tap; the host's diff no longer has the hash, so it refuses with
// CONFLICT and the index is untouched.
func TestStageHunksRefusesAChangedFile(t *testing.T) {
	dir, r := twoHunks(t)
	h := hashOf(t, r, closed, trust.Control, "a.txt", false)
	before := git(t, dir, "ls-files", "-s")
	write(t, dir, map[string]string{"a.txt": read(t, filepath.Join(dir, "a.txt")) + "one more\n"})
	_, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{1}, Hash: h})
	wantRefusal(t, err, ErrDiffChanged, "changed since you looked")
	if after := git(t, dir, "ls-files", "-s"); after != before {
		t.Fatalf("index changed:\n%s\n%s", before, after)
	}
	if out := git(t, dir, "diff", "--cached"); out != "" {
		t.Fatalf("staged after the refusal:\n%s", out)
	}
}

// TestStageHunksBadChoices: indices out of range, repeated, negative, too
// many or none, and a hash of the wrong shape, refuse as BAD_PARAMS; a
// file with nothing to cut (untracked) asks for the whole file.
func TestStageHunksBadChoices(t *testing.T) {
	dir, r := twoHunks(t)
	h := hashOf(t, r, closed, trust.Control, "a.txt", false)
	for _, hs := range [][]int{{2}, {-1}, {0, 0}, nil, make([]int, MaxHunks+1)} {
		_, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "a.txt", Hunks: hs, Hash: h})
		wantRefusal(t, err, ErrBadHunks, "by their position")
	}
	_, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{0}, Hash: strings.ToUpper(h)})
	wantRefusal(t, err, ErrBadHunks)
	write(t, dir, map[string]string{"new.txt": "n\n"})
	h = hashOf(t, r, closed, trust.Control, "new.txt", false)
	_, err = r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: "new.txt", Hunks: []int{0}, Hash: h})
	wantRefusal(t, err, ErrNoHunks, "stage the whole file")
	for _, p := range []string{"../x", ".git/config", ""} {
		if _, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: p, Hunks: []int{0}, Hash: h}); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	if out := git(t, dir, "diff", "--cached"); out != "" {
		t.Fatalf("staged after refusals:\n%s", out)
	}
}

// TestStageHunksRefusesSecretsAndHardLinks: a tracked .env with two hunks
// stages by hunk for the desktop and a full device (the rule is what stops
// control), and is refused for control; a hard-linked file is refused for
// every device and staged for the desktop.
func TestStageHunksRefusesSecretsAndHardLinks(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{".env": "A=1\n", "b.txt": "b\n"})
	write(t, dir, map[string]string{".env": "A=2\n", "b.txt": "B\n"})
	r := open(t, dir)
	h := hashOf(t, r, desktop, trust.Full, ".env", false)
	_, err := r.StageHunks(ctx, closed, trust.Control, HunksOptions{Path: ".env", Hunks: []int{0}, Hash: h})
	wantRefusal(t, err, ErrSecret, ".env may hold secrets", "to stage it")
	if out := git(t, dir, "diff", "--cached"); out != "" {
		t.Fatalf("secret staged for control:\n%s", out)
	}
	if _, err := r.StageHunks(ctx, closed, trust.Full, HunksOptions{Path: ".env", Hunks: []int{0}, Hash: h}); err != nil {
		t.Fatalf("full: %v", err)
	}
	if out := git(t, dir, "diff", "--cached", "--name-only"); out != ".env\n" {
		t.Fatalf("full did not stage the secret: %q", out)
	}

	if err := os.Link(filepath.Join(dir, "b.txt"), filepath.Join(t.TempDir(), "elsewhere")); err != nil {
		t.Fatal(err)
	}
	h = hashOf(t, r, desktop, trust.Full, "b.txt", false)
	_, err = r.StageHunks(ctx, phoneOn, trust.Full, HunksOptions{Path: "b.txt", Hunks: []int{0}, Hash: h})
	wantRefusal(t, err, ErrHardLinked, "hard-linked")
	if out := git(t, dir, "diff", "--cached", "--name-only"); out != ".env\n" {
		t.Fatalf("hard-linked file staged for a device: %q", out)
	}
	if _, err := r.StageHunks(ctx, desktop, trust.Full, HunksOptions{Path: "b.txt", Hunks: []int{0}, Hash: h}); err != nil {
		t.Fatalf("desktop: %v", err)
	}
}

// TestStageHunksClosedGateRefusesProgramConfig: a clean filter in the
// repository's config runs when git diffs the file (the host's own diff
// before the apply): for the desktop the marker appears; the closed gate
// refuses before any diff, naming the action, and the index is untouched.
func TestStageHunksClosedGateRefusesProgramConfig(t *testing.T) {
	dir, r := twoHunks(t)
	marker := filepath.Join(t.TempDir(), "ran")
	git(t, dir, "config", "filter.x.clean", "touch "+marker+"; cat")
	write(t, dir, map[string]string{".gitattributes": "a.txt filter=x\n"})

	h := hashOf(t, r, desktop, trust.Full, "a.txt", false)
	os.Remove(marker)
	if _, err := r.StageHunks(ctx, desktop, trust.Full, HunksOptions{Path: "a.txt", Hunks: []int{1}, Hash: h}); err != nil {
		t.Fatalf("desktop: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("not reproduced: the desktop's stageHunks ran no clean filter: %v", err)
	}
	git(t, dir, "reset", "-q") // plain git: its refresh may run the filter too
	os.Remove(marker)

	_, err := r.StageHunks(ctx, closed, trust.Full, HunksOptions{Path: "a.txt", Hunks: []int{1}, Hash: h})
	wantRefusal(t, err, ErrRefused, "filter.x.clean", "to stage files from the phone")
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the clean filter ran for the closed gate: %v", err)
	}
	if out := git(t, dir, "diff", "--cached"); out != "" {
		t.Fatalf("staged after the refusal:\n%s", out)
	}
}
