package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// What a device saw. A change from the phone names the state it was
// decided on, and is refused when the checkout is no longer in it: the
// person at the computer may have switched branch, finished the merge or
// started another one between the phone's read and its change. git itself
// would act on whatever is there now.

// Expected names the operation in progress a device saw: git.conflicts's
// op and id (Progress.Op, Progress.ID).
type Expected struct {
	Op string
	ID string
}

// Refusals of a change whose state moved.
var (
	ErrOpChanged = refusal.New(refusal.Conflict, "operation changed",
		"What is in progress here changed since this page read it (it was finished or aborted, or another one was started on the computer). Reload the conflicts and look again.")
	ErrHeadMoved = refusal.New(refusal.Conflict, "last commit changed",
		"The last commit changed since this page read it (a commit was made, or another branch was switched to on the computer). Reload and look again before amending.")
)

// stateID names one operation in progress, so a device can say which one
// it saw. It is a hash over everything git would act on when the phone
// concludes or aborts it: HEAD; every state file git keeps for the
// operation, whole (all of MERGE_HEAD's heads, not its first: an octopus
// adds lines; a rebase's orig-head, onto, todo and done lists, so a rebase
// started again with another todo is another one; a sequence's todo); and
// the index as git lists it with its stages, with each conflicted path's
// work-tree file, so what was staged or edited at the computer since the
// phone looked (which an abort would throw away) is another state too.
// The files are hashed as bytes, never read for meaning. "" when one could
// not be read: no device's id matches it.
func (r *Repo) stateID(ctx context.Context, t trust.Trust, d *decision, op string) (string, error) {
	names := stateFiles[op]
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", op)
	head, err := r.run(ctx, t, d, call{sub: subRevParse, opts: []string{"--verify", "-q", "HEAD"}, okExit: []int{1}})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "HEAD %s\x00", strings.TrimSpace(string(head.stdout)))
	if len(names) > 0 {
		at, err := r.gitPaths(ctx, t, d, names...)
		if err != nil {
			return "", err
		}
		for _, n := range names {
			fmt.Fprintf(h, "%s\x00", n)
			if !hashStateFile(h, at[n]) {
				return "", nil
			}
		}
	}
	index, err := r.run(ctx, t, d, call{sub: subLsFiles, opts: []string{"-s", "-z"}})
	if err != nil {
		return "", err
	}
	if index.truncated {
		return "", nil
	}
	h.Write(index.stdout)
	conflicted, err := r.unmerged(ctx, t, d, "")
	if err != nil {
		return "", err
	}
	for _, u := range conflicted {
		// Through fsguard, as every read of the work tree: the bytes only
		// go into the hash, which tells a device nothing of them.
		data, err := r.root.ReadFile(trust.Full, u.path, maxStateFile)
		if err != nil {
			data = []byte("unreadable")
			if info, serr := r.root.Stat(u.path); serr == nil {
				data = fmt.Appendf(nil, "%s %d %d", info.Kind, info.Size, info.Links)
			}
		}
		fmt.Fprintf(h, "\x00work %s %d\x00", u.path, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// stateFiles are the files of git's folder each operation keeps its state
// in (git's sequencer.c and builtin/rebase.c, builtin/am.c), as
// rev-parse --git-path names them.
var stateFiles = map[string][]string{
	OpMerge:      {"MERGE_HEAD", "MERGE_MODE"},
	OpCherryPick: {"CHERRY_PICK_HEAD", "sequencer/todo", "sequencer/head"},
	OpRevert:     {"REVERT_HEAD", "sequencer/todo", "sequencer/head"},
	OpRebase: {"REBASE_HEAD", "rebase-merge/orig-head", "rebase-merge/onto", "rebase-merge/git-rebase-todo", "rebase-merge/done",
		"rebase-merge/stopped-sha", "rebase-apply/orig-head", "rebase-apply/onto", "rebase-apply/next", "rebase-apply/last"},
	OpApply: {"rebase-apply/orig-head", "rebase-apply/next", "rebase-apply/last"},
}

// maxStateFile bounds what of one state file (or a conflicted work-tree
// file) is hashed: a bigger one names no state a device can match.
const maxStateFile = 16 << 20

// hashStateFile adds path's bytes to h, or its absence; opened without
// following a link or waiting on a FIFO, and only when it is a regular
// file of at most maxStateFile bytes. false: it could not be read so.
func hashStateFile(h io.Writer, path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		fmt.Fprint(h, "absent\x00")
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxStateFile {
		return false
	}
	fmt.Fprintf(h, "%d\x00", st.Size())
	n, err := io.Copy(h, io.LimitReader(f, maxStateFile+1))
	return err == nil && n == st.Size()
}

// expect refuses when what is in progress (p) is not what the device saw.
func expect(p Progress, want Expected) error {
	if p.Op == "" || p.Op != want.Op || p.ID == "" || p.ID != want.ID {
		return ErrOpChanged
	}
	return nil
}
