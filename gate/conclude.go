package gate

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// ErrRebaseExec: a rebase whose todo list runs commands.
var ErrRebaseExec = refusal.New(refusal.Refused, "rebase runs commands",
	"This rebase runs commands of its own (exec lines), which gatehouse doesn't run for a phone. Finish it on the computer, or turn on Full access for remote devices there.")

// ConcludeResult is what concluding left: the commit HEAD is at, and what
// is still in progress (a rebase stops again at its next conflict).
type ConcludeResult struct {
	OID      string   `json:"oid"`
	Progress Progress `json:"progress"`
	// Conflicted counts the files in conflict after, for a rebase that
	// stopped again.
	Conflicted int `json:"conflicted,omitempty"`
}

// Conclude finishes what is in progress once no file is in conflict: a
// merge commits with git's prepared message (git commit --no-edit), a
// rebase, cherry-pick or revert continues (--continue, with git's own
// message: GIT_EDITOR is ':'). For a closed gate no hook and no signing
// program runs (core.hooksPath and the gpgSign keys are forced), a merge
// driver of the user's config refuses a rebase as it refuses a merge
// (checkMerge), and a rebase whose todo list holds exec lines is refused.
//
// want is the operation the device saw (Expected); anything else in
// progress now refuses with ErrOpChanged.
func (r *Repo) Conclude(ctx context.Context, t trust.Trust, want Expected) (*ConcludeResult, error) {
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "finish it")
	if err != nil {
		return nil, err
	}
	p, err := r.progress(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if p.Op == "" {
		return nil, ErrNothingInProgress
	}
	if err := expect(p, want); err != nil {
		return nil, err
	}
	left, err := r.unmerged(ctx, t, d, "")
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		return nil, ErrStillConflicted
	}
	if p.Op == OpRebase || p.Op == OpCherryPick || p.Op == OpRevert {
		// --continue merges the commits left to replay.
		if err := d.checkMerge("finish it"); err != nil {
			return nil, err
		}
		if err := r.refuseStateOptions(ctx, t, d, p.Op); err != nil {
			return nil, err
		}
	}
	var c call
	switch p.Op {
	case OpMerge:
		// --cleanup=strip: the message git prepared, as the person's editor
		// would commit it. Without an editor git keeps '#' lines, so the
		// "# Conflicts:" list it writes went into the commit.
		c = call{sub: subCommit, opts: []string{"--no-edit", "--cleanup=strip", "-q"}}
		if t.Closed() {
			c.opts = append(c.opts, "--no-verify", "--no-gpg-sign")
		}
	case OpCherryPick:
		c = call{sub: subCherryPick, opts: []string{"--continue"}}
	case OpRevert:
		c = call{sub: subRevert, opts: []string{"--continue"}}
	case OpRebase:
		if err := r.refuseRebaseExec(ctx, t, d); err != nil {
			return nil, err
		}
		c = call{sub: subRebase, opts: []string{"--continue"}, okExit: []int{1}}
	default:
		return nil, ErrCannotConclude
	}
	res, err := r.run(ctx, t, d, c)
	if err != nil {
		return nil, gitFailure(res, err)
	}
	return r.after(ctx, t, d, res, c.sub.name)
}

// after reads what an operation left: HEAD, and what is in progress.
func (r *Repo) after(ctx context.Context, t trust.Trust, d *decision, res *result, subName string) (*ConcludeResult, error) {
	p, err := r.progress(ctx, t, d)
	if err != nil {
		return nil, err
	}
	left, err := r.unmerged(ctx, t, d, "")
	if err != nil {
		return nil, err
	}
	if res != nil && res.exit != 0 && len(left) == 0 {
		return nil, gitFailure(res, &ExitError{Sub: subName, Code: res.exit, Stderr: string(res.stderr)})
	}
	if p.Op == "" && len(left) > 0 {
		if p, err = r.stashProgress(ctx, t, d); err != nil {
			return nil, err
		}
	}
	oid, err := r.head(ctx, t, d)
	if err != nil {
		return nil, err
	}
	return &ConcludeResult{OID: oid, Progress: p, Conflicted: len(left)}, nil
}

// refuseRebaseExec refuses, for a closed gate, a rebase whose todo list
// (what is left of it) runs a command: "exec"/"x" lines run through the
// shell on --continue.
func (r *Repo) refuseRebaseExec(ctx context.Context, t trust.Trust, d *decision) error {
	if !t.Closed() {
		return nil
	}
	at, err := r.gitPaths(ctx, t, d, "rebase-merge/git-rebase-todo")
	if err != nil {
		return err
	}
	st, err := os.Lstat(at["rebase-merge/git-rebase-todo"])
	if err != nil {
		return nil // rebase-apply: no todo list, no exec
	}
	if !st.Mode().IsRegular() || st.Size() > 16<<20 {
		return ErrRebaseExec
	}
	todo, err := os.ReadFile(at["rebase-merge/git-rebase-todo"])
	if err != nil {
		return err
	}
	for line := range bytes.SplitSeq(todo, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) > 0 && (string(f[0]) == "x" || string(f[0]) == "exec") {
			return ErrRebaseExec
		}
	}
	return nil
}

// Abort gives up what is in progress, with what git offers for it: merge
// --abort, rebase --abort, cherry-pick --abort, revert --abort, and for a
// conflicted stash apply (no operation file) reset --merge, which puts back
// HEAD's version of the files the apply changed and keeps the unstaged
// changes to other files, but not changes staged before the apply
// (stashProgress says so; the stash stays in the stash list). want is the
// operation the device saw, as for Conclude.
func (r *Repo) Abort(ctx context.Context, t trust.Trust, want Expected) (*ConcludeResult, error) {
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "abort it")
	if err != nil {
		return nil, err
	}
	p, err := r.progress(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if p.Op == "" {
		left, err := r.unmerged(ctx, t, d, "")
		if err != nil {
			return nil, err
		}
		if len(left) == 0 {
			return nil, ErrNothingInProgress
		}
		if p, err = r.stashProgress(ctx, t, d); err != nil {
			return nil, err
		}
	}
	if err := expect(p, want); err != nil {
		return nil, err
	}
	var c call
	switch p.Op {
	case OpMerge:
		c = call{sub: subMerge, opts: []string{"--abort"}}
	case OpRebase:
		c = call{sub: subRebase, opts: []string{"--abort"}}
	case OpCherryPick:
		c = call{sub: subCherryPick, opts: []string{"--abort"}}
	case OpRevert:
		c = call{sub: subRevert, opts: []string{"--abort"}}
	case OpUnmerged:
		c = call{sub: subReset, opts: []string{"--merge", "-q"}}
	default:
		return nil, ErrCannotConclude
	}
	if res, err := r.run(ctx, t, d, c); err != nil {
		return nil, gitFailure(res, err)
	}
	return r.after(ctx, t, d, nil, c.sub.name)
}

// ErrStateRunsProgram: the state files of a rebase, cherry-pick or revert
// in progress ask git to sign the commits it makes or to merge with a
// strategy of its own.
var ErrStateRunsProgram = refusal.New(refusal.Refused, "operation state runs a program",
	"This operation was started with options that run programs of their own (signing its commits, or a merge strategy that is a separate program), which gatehouse doesn't run for a phone. Finish it on the computer, or turn on Full access for remote devices there.")

// builtinStrategies are the strategies the sequencer merges with in its own
// process (sequencer.c do_pick_commit: "recursive" and "ort" go to
// do_recursive_merge); any other name runs git-merge-<name>
// (try_merge_command), a program found on the exec path or PATH.
var builtinStrategies = map[string]bool{"ort": true, "recursive": true}

// refuseStateOptions refuses, for a closed gate, a --continue whose saved
// options would run a program. git reads them from its folder after the
// command line and the config, so they win over commit.gpgSign=false and
// over anything the call could pass (git rebase --continue takes no other
// option):
//   - rebase-merge/ and rebase-apply/gpg_sign_opt: builtin/rebase.c
//     read_basic_state takes the file's content, whatever it is (an empty
//     file asks for the default key), and sequencer.c read_populate_opts
//     reads rebase-merge/gpg_sign_opt again; either signs every commit
//     the rebase makes with gpg.program.
//   - rebase-merge/strategy: read_strategy_opts; a name other than ort or
//     recursive runs git-merge-<name>. strategy_opts alone only passes
//     words to that strategy (the builtin ones take -X ours/theirs and
//     the like, which run nothing), so it is not refused.
//   - sequencer/opts (a cherry-pick or revert of several commits): a
//     config-format file read by read_populate_opts with
//     git_config_from_file, no includes; options.gpg-sign signs and
//     options.strategy names a strategy as above.
//
// allow_rerere_autoupdate (and options.allow-rerere-auto) names no program:
// rerere runs in git's own process. options.edit runs the editor, which
// GIT_EDITOR=: makes a no-op. Exec lines of the todo list: refuseRebaseExec.
func (r *Repo) refuseStateOptions(ctx context.Context, t trust.Trust, d *decision, op string) error {
	if !t.Closed() {
		return nil
	}
	names := []string{"sequencer/opts"}
	if op == OpRebase {
		names = []string{"rebase-merge/gpg_sign_opt", "rebase-apply/gpg_sign_opt", "rebase-merge/strategy"}
	}
	at, err := r.gitPaths(ctx, t, d, names...)
	if err != nil {
		return err
	}
	for _, n := range names {
		text, present, ok := readStateFile(at[n])
		switch {
		case !present:
			continue
		case !ok:
			return ErrStateRunsProgram // a link, a FIFO, a huge file: not read, refused
		case strings.HasSuffix(n, "gpg_sign_opt"):
			return ErrStateRunsProgram
		case n == "rebase-merge/strategy" && !builtinStrategies[strings.TrimSpace(text)]:
			return ErrStateRunsProgram
		case n == "sequencer/opts" && sequencerOptsRun(text):
			return ErrStateRunsProgram
		}
	}
	return nil
}

// readStateFile reads one of git's state files, at most 64 KiB, opened
// without following a link or waiting on a FIFO. present is false only
// when there is no file; ok is false when there is one that is not a
// regular file of at most that size.
func readStateFile(path string) (text string, present, ok bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "", false, true
	}
	if err != nil {
		return "", true, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > 64<<10 {
		return "", true, false
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10+1))
	if err != nil || len(b) > 64<<10 {
		return "", true, false
	}
	return string(b), true, true
}

// sequencerOptsRun reports whether sequencer/opts asks to sign or names a
// strategy other than a builtin one. It reads git's config format the
// simple way and errs toward yes: any line that mentions gpg in any case
// counts, and a strategy value must be exactly ort or recursive (a
// continued or quoted value does not match, and refuses).
func sequencerOptsRun(text string) bool {
	for line := range strings.SplitSeq(strings.ToLower(text), "\n") {
		if strings.Contains(line, "gpg") {
			return true
		}
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") { // "[options] key = value" is one line too
			if _, rest, ok := strings.Cut(line, "]"); ok {
				line = strings.TrimSpace(rest)
			}
		}
		key, value, _ := strings.Cut(line, "=")
		if strings.TrimSpace(key) == "strategy" && !builtinStrategies[strings.TrimSpace(value)] {
			return true
		}
	}
	return false
}
