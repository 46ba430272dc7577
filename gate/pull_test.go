package gate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// bothMoved is a checkout and its upstream that both changed a.txt (a
// conflict) or, with apart, different files; config is set locally first.
func bothMoved(t *testing.T, apart bool, config ...string) string {
	t.Helper()
	dir := withDaemonRemote(t, false) // the upstream added b.txt
	url := strings.TrimSpace(git(t, dir, "remote", "get-url", "origin"))
	other := filepath.Join(t.TempDir(), "other")
	git(t, "", "clone", "-q", url, other)
	write(t, other, map[string]string{"a.txt": "upstream\n"})
	git(t, other, "commit", "-qam", "upstream a")
	git(t, other, "push", "-q", "origin", "HEAD:main")
	name := "a.txt"
	if apart {
		name = "c.txt"
	}
	write(t, dir, map[string]string{name: "local\n"})
	git(t, dir, "add", name)
	git(t, dir, "commit", "-qm", "local")
	for i := 0; i+1 < len(config); i += 2 {
		git(t, dir, "config", config[i], config[i+1])
	}
	return dir
}

// TestPullMergesWhenBothMoved: no conflict makes a merge commit; a
// conflict stops the merge for the conflicts screen, which finishes it.
func TestPullMergesWhenBothMoved(t *testing.T) {
	gittest.Home(t, "")
	dir := bothMoved(t, true)
	res, err := open(t, dir).Pull(ctx, closed)
	if err != nil || !res.Merged || res.Stopped != "" {
		t.Fatalf("pull: %+v %v", res, err)
	}
	if p := strings.Fields(git(t, dir, "log", "-1", "--format=%P")); len(p) != 2 || read(t, filepath.Join(dir, "a.txt")) != "upstream\n" {
		t.Fatalf("not merged: parents %v", p)
	}

	dir = bothMoved(t, false)
	r := open(t, dir)
	res, err = r.Pull(ctx, closed)
	if err != nil || res.Stopped != OpMerge || res.Conflicted != 1 {
		t.Fatalf("pull: %+v %v", res, err)
	}
	d := detail(t, r, closed, trust.Control, "a.txt")
	if *d.Segments[0].Conflict != (Region{Ours: "local\n", Base: "a\n", Theirs: "upstream\n"}) {
		t.Fatalf("regions %+v", d.Segments)
	}
	if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "a.txt", Hash: d.Hash, Regions: []string{"both"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Conclude(ctx, closed, seen(t, r, closed)); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "a.txt")) != "local\nupstream\n" || git(t, dir, "status", "--porcelain") != "" {
		t.Fatal("the merge did not end as chosen")
	}
}

// TestPullRebasesAsConfigSays: pull.rebase=true rebases (and stops on a
// conflict as a rebase), branch.<name>.rebase=false wins over it, and
// pull.rebase=interactive is refused with a sentence.
func TestPullRebasesAsConfigSays(t *testing.T) {
	gittest.Home(t, "")
	dir := bothMoved(t, true, "pull.rebase", "true")
	res, err := open(t, dir).Pull(ctx, closed)
	if err != nil || !res.Rebased || res.Stopped != "" {
		t.Fatalf("pull: %+v %v", res, err)
	}
	if git(t, dir, "rev-parse", "HEAD^") != git(t, dir, "rev-parse", "origin/main") {
		t.Fatal("not rebased onto the upstream")
	}
	dir = bothMoved(t, false, "pull.rebase", "true")
	res, err = open(t, dir).Pull(ctx, closed)
	if err != nil || res.Stopped != OpRebase {
		t.Fatalf("pull: %+v %v", res, err)
	}
	dir = bothMoved(t, true, "pull.rebase", "true", "branch.main.rebase", "false")
	if res, err = open(t, dir).Pull(ctx, closed); err != nil || !res.Merged {
		t.Fatalf("branch.main.rebase=false: %+v %v", res, err)
	}
	dir = bothMoved(t, true, "pull.rebase", "interactive")
	before := git(t, dir, "rev-parse", "HEAD")
	_, err = open(t, dir).Pull(ctx, closed)
	wantRefusal(t, err, ErrInteractivePull, "interactive rebase")
	if git(t, dir, "rev-parse", "HEAD") != before {
		t.Fatal("a refused pull moved HEAD")
	}
}

// TestClosedMergeReplaysNoRecordedResolution: rerere replays the git
// folder's recorded resolution into a merged file for the desktop; a
// closed phone's merge (rerere.enabled forced off) leaves the conflict for
// the phone to see and resolve. The git folder's shape check refuses a
// linked postimage first; this wall holds without it.
func TestClosedMergeReplaysNoRecordedResolution(t *testing.T) {
	gittest.Home(t, "")
	for _, tr := range []trust.Trust{desktop, closed} {
		dir := bothMoved(t, false, "rerere.enabled", "true")
		git(t, dir, "fetch", "-q")
		git(t, dir, "!", "merge", "origin/main")
		write(t, dir, map[string]string{"a.txt": "planted\n"})
		git(t, dir, "rerere") // records the postimage
		git(t, dir, "merge", "--abort")
		res, err := open(t, dir).Pull(ctx, tr)
		if err != nil || res.Stopped != OpMerge {
			t.Fatalf("pull: %+v %v", res, err)
		}
		replayed := read(t, filepath.Join(dir, "a.txt")) == "planted\n"
		if tr == desktop && !replayed {
			t.Fatal("the desktop's merge replayed nothing: the test shows nothing")
		}
		if tr == closed && replayed {
			t.Fatal("a closed merge replayed a recorded resolution")
		}
	}
}

// TestPullWithLocalChangesInTheWay: a merging pull and a rebasing one
// whose work would overwrite or include uncommitted changes are refused
// with the dirty sentence, and nothing moves.
func TestPullWithLocalChangesInTheWay(t *testing.T) {
	gittest.Home(t, "")
	for _, rebase := range []string{"false", "true"} {
		dir := bothMoved(t, true, "pull.rebase", rebase)
		write(t, dir, map[string]string{"a.txt": "uncommitted\n"})
		before := git(t, dir, "rev-parse", "HEAD")
		_, err := open(t, dir).Pull(ctx, closed)
		wantRefusal(t, err, ErrDirty, "uncommitted changes")
		if git(t, dir, "rev-parse", "HEAD") != before || read(t, filepath.Join(dir, "a.txt")) != "uncommitted\n" {
			t.Fatalf("pull.rebase=%s: a refused pull changed the checkout", rebase)
		}
	}
}
