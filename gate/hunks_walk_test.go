package gate

import (
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
)

// StageHunks does only what staging needs: git diff of the file and git
// apply, two processes, and no preview read. It used to run the diff Diff
// shows, listing the untracked files (a third git process) and reading
// their previews, only to cut them off again: 3 processes for a tracked
// file, and a preview read for an untracked one before refusing it. An
// untracked file is still refused as one that can't be staged by hunks,
// and a file changed since it was viewed as changed.
func TestStageHunksDoesOnlyWhatItStages(t *testing.T) {
	for _, tr := range []trust.Trust{closed, desktop} {
		dir, r := twoHunks(t)
		write(t, dir, map[string]string{"new.txt": "n\n"})
		settled(t, filepath.Join(dir, ".git", "config")) // so the decision is cached, and counts no git of its own
		count := func() (git, previews int64) { return r.started.Load(), previewReads.Load() }

		h := hashOf(t, r, tr, trust.Control, "a.txt", false)
		git0, prev0 := count()
		if _, err := r.StageHunks(ctx, tr, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{1}, Hash: h}); err != nil {
			t.Fatalf("%v: staging a hunk of a.txt: %v", tr, err)
		}
		if git, prev := count(); git-git0 != 2 || prev-prev0 != 0 {
			t.Errorf("%v: staging a hunk started %d git processes and read %d previews, want 2 (diff, apply) and 0", tr, git-git0, prev-prev0)
		}

		h = hashOf(t, r, tr, trust.Control, "new.txt", false)
		git0, prev0 = count()
		_, err := r.StageHunks(ctx, tr, trust.Control, HunksOptions{Path: "new.txt", Hunks: []int{0}, Hash: h})
		wantRefusal(t, err, ErrNoHunks, "stage the whole file")
		if git, prev := count(); git-git0 != 2 || prev-prev0 != 0 {
			t.Errorf("%v: refusing an untracked file started %d git processes and read %d previews, want 2 (diff, ls-files) and 0", tr, git-git0, prev-prev0)
		}

		h = hashOf(t, r, tr, trust.Control, "a.txt", false)
		write(t, dir, map[string]string{"a.txt": "all new\n"})
		_, err = r.StageHunks(ctx, tr, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{0}, Hash: h})
		wantRefusal(t, err, ErrDiffChanged, "changed since you looked")
		git(t, dir, "checkout", "--", "a.txt")
		_, err = r.StageHunks(ctx, tr, trust.Control, HunksOptions{Path: "a.txt", Hunks: []int{0}, Hash: h})
		wantRefusal(t, err, ErrDiffChanged, "changed since you looked")
	}
}
