package gate

import (
	"bytes"
	"context"
	"strings"
	"sync"

	"github.com/gatehouse/gatehouse/trust"
)

const (
	// MaxStagePaths bounds the paths a device names in one stage.
	MaxStagePaths = 5_000
	// MaxStageAll bounds the files one "stage all" takes.
	MaxStageAll = 50_000
	// MaxDiscardPaths bounds the paths one discard names.
	MaxDiscardPaths = 500
)

// StageOptions say what to stage or unstage: named paths (a folder names
// every change under it), or all.
type StageOptions struct {
	Paths   []string
	All     bool
	Unstage bool
}

// StageResult counts what was staged and what was left out (submodules,
// secret files below full, and files that go through a filter driver a
// closed call switches off).
type StageResult struct {
	Count   int `json:"count"`
	Skipped int `json:"skipped,omitempty"`
}

// Stage stages or unstages changes. Staging never takes a hard-linked file
// from a device (its copy would later leak through a diff or a push): a
// named one is refused, and "all" refuses the whole call naming it
// (TestHardLinksNeverReachGitFromAPhone in gate/attacks_test.go). Below
// full, secret files are left out of "all" and refused when named.
// Unstaging a rename also resets its old path.
func (r *Repo) Stage(ctx context.Context, t trust.Trust, g trust.Grant, o StageOptions) (*StageResult, error) {
	var paths []string
	if !o.All {
		var err error
		if paths, err = cleanPaths(o.Paths, MaxStagePaths); err != nil {
			return nil, err
		}
	}
	action := "stage files"
	if o.Unstage {
		action = "unstage files"
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, action)
	if err != nil {
		return nil, err
	}
	if o.Unstage {
		st, err := r.status(ctx, t, d)
		if err != nil {
			return nil, err
		}
		if st.Truncated {
			return nil, ErrTooManyPaths
		}
		return r.unstage(ctx, t, d, st, pick(st.Files, paths, o.All))
	}
	files, err := r.unstaged(ctx, t, d)
	if err != nil {
		return nil, err
	}
	return r.stage(ctx, t, d, viewer{t, g}, pick(files, paths, o.All), o.All)
}

// unstaged lists what staging could take: tracked files changed in the work
// tree (git diff-files) and untracked files (git ls-files --others), the two
// listings run side by side. It is the part of a status a stage needs, and
// much cheaper than a whole status.
func (r *Repo) unstaged(ctx context.Context, t trust.Trust, d *decision) ([]FileStatus, error) {
	var (
		others  []string
		listErr error
		wg      sync.WaitGroup
	)
	// Always git's answer of now, never the list cache's (listcache.go): a
	// change is not decided from a kept answer.
	wg.Go(func() { others, _, listErr = r.lsUntracked(ctx, t, d, "") })
	res, err := r.run(ctx, t, d, call{sub: subDiffFiles, opts: []string{"--raw", "-z", "--no-renames"}})
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if listErr != nil {
		return nil, listErr
	}
	if res.truncated {
		return nil, ErrTooManyPaths
	}
	files := parseRaw(res.stdout)
	for _, p := range others {
		files = append(files, FileStatus{Path: p, Index: "?", Worktree: "?"})
	}
	return files, nil
}

// parseRaw reads diff --raw -z: ":oldmode newmode oldsha newsha STATUS\0path\0".
func parseRaw(out []byte) []FileStatus {
	var files []FileStatus
	recs := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(recs); i += 2 {
		meta := strings.Fields(string(recs[i]))
		if len(meta) != 5 {
			break
		}
		files = append(files, FileStatus{Path: string(recs[i+1]), Index: ".", Worktree: meta[4][:1],
			Submodule: meta[0] == ":160000" || meta[1] == "160000"})
	}
	return files
}

// pick returns the status entries a request names: all of them, or those
// equal to a named path or under a named folder.
func pick(files []FileStatus, paths []string, all bool) []FileStatus {
	if all {
		return files
	}
	var out []FileStatus
	for _, f := range files {
		for _, p := range paths {
			if f.Path == p || strings.HasPrefix(f.Path, p+"/") || f.OrigPath == p {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

func (r *Repo) stage(ctx context.Context, t trust.Trust, d *decision, v viewer, picked []FileStatus, all bool) (*StageResult, error) {
	res := &StageResult{}
	var list []string
	for _, f := range picked {
		if f.Worktree == "." {
			continue // nothing unstaged here
		}
		if f.Submodule {
			res.Skipped++
			continue
		}
		switch r.hidden(v, f.Path, true) {
		case secretHidden:
			if !all {
				return nil, refuseSecret(f.Path, "stage")
			}
			res.Skipped++
			continue
		case linkHidden:
			return nil, refuseHardLinked(f.Path, "stage")
		}
		list = append(list, f.Path)
	}
	if len(list) > MaxStageAll {
		return nil, ErrTooManyPaths
	}
	list, err := r.withoutFiltered(ctx, t, d, list, picked, all, "stage", res)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return res, nil
	}
	var in bytes.Buffer
	for _, p := range list {
		in.WriteString(p)
		in.WriteByte(0)
	}
	if res, err := r.run(ctx, t, d, call{sub: subUpdateIndex, opts: []string{"--add", "--remove", "-z", "--stdin"}, stdin: &in}); err != nil {
		return nil, gitFailure(res, err)
	}
	res.Count = len(list)
	return res, nil
}

// withoutFiltered takes out of list the files that go through a
// switched-off filter driver (filtered.go): staging one would store its
// smudged bytes (an LFS file's content) where git stores the clean ones
// (its pointer). Named, the first refuses the call; with all, each is left
// out and counted in res. A deletion needs no filter and stays.
func (r *Repo) withoutFiltered(ctx context.Context, t trust.Trust, d *decision, list []string, picked []FileStatus, all bool, verb string, res *StageResult) ([]string, error) {
	deleted := map[string]bool{}
	for _, f := range picked {
		if f.Worktree == "D" {
			deleted[f.Path] = true
		}
	}
	var ask []string
	for _, p := range list {
		if !deleted[p] {
			ask = append(ask, p)
		}
	}
	f, err := r.filtered(ctx, t, d, ask)
	if err != nil || len(f) == 0 {
		return list, err
	}
	var keep []string
	for _, p := range list {
		driver, ok := f[p]
		switch {
		case !ok:
			keep = append(keep, p)
		case !all:
			return nil, refuseFiltered(p, driver, verb)
		default:
			res.Skipped++
		}
	}
	return keep, nil
}

func (r *Repo) unstage(ctx context.Context, t trust.Trust, d *decision, st *Status, picked []FileStatus) (*StageResult, error) {
	var list []string
	for _, f := range picked {
		if f.Index == "." || f.Index == "?" {
			continue
		}
		list = append(list, f.Path)
		if f.OrigPath != "" {
			list = append(list, f.OrigPath) // so the old name does not stay staged as a deletion
		}
	}
	for _, chunk := range chunks(list) {
		c := call{sub: subReset, opts: []string{"-q"}, paths: chunk, okExit: []int{1}}
		if st.Head == "" {
			c = call{sub: subRm, opts: []string{"-q", "--cached", "-r"}, paths: chunk}
		}
		if res, err := r.run(ctx, t, d, c); err != nil {
			return nil, gitFailure(res, err)
		}
	}
	return &StageResult{Count: len(picked)}, nil
}

// lock takes the checkout's change lock, or refuses at once: one git change
// at a time per checkout, and a quick change never waits behind a long one.
func (r *Repo) lock() (func(), error) {
	if !r.change.TryLock() {
		return nil, ErrBusy
	}
	return r.change.Unlock, nil
}
