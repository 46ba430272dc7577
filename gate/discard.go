package gate

import (
	"context"
	"errors"
	"slices"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/trust"
)

// DiscardOptions name the files whose changes to throw away (1 to 500).
// With SkipFolders ("Discard all"), folders and submodules among them are
// left out and counted; without it a named folder is refused.
type DiscardOptions struct {
	Paths       []string
	SkipFolders bool
	// Grant is the device's grant. Below full, secret files are treated as
	// stage treats them: a device that may not read or stage .env may not
	// delete it either. The zero value (None) is the strictest.
	Grant trust.Grant
}

// Discard throws away changes: tracked files are restored from HEAD (staged
// and unstaged), and only the untracked files named are deleted. Discarding
// a rename's new path also restores its old one. A hard-linked file is
// never touched from a device, and below full a secret file is not either
// (refused when named, left out and counted with SkipFolders), since
// deleting a key is as much a change to it as staging it.
func (r *Repo) Discard(ctx context.Context, t trust.Trust, o DiscardOptions) (*StageResult, error) {
	paths, err := cleanPaths(o.Paths, MaxDiscardPaths)
	if err != nil {
		return nil, err
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "discard changes")
	if err != nil {
		return nil, err
	}
	res := &StageResult{}
	var keep []string
	for _, p := range paths {
		info, err := r.root.Stat(p)
		switch {
		case err == nil && info.Kind == "dir":
			if !o.SkipFolders {
				return nil, ErrFolder
			}
			res.Skipped++
			continue
		case err == nil && r.hidden(viewer{t, o.Grant}, p, true) == linkHidden:
			return nil, refuseHardLinked(p, "discard")
		case err != nil && !errors.Is(err, fsguard.ErrNotFound):
			return nil, err
		}
		keep = append(keep, p)
	}
	st, err := r.status(ctx, t, d)
	if err != nil {
		return nil, err
	}
	v := viewer{t, o.Grant}
	var (
		tracked   [][]string // a path, and a rename's old path
		untracked []string
	)
	for _, f := range pick(st.Files, keep, false) {
		switch {
		case f.Submodule:
			if !o.SkipFolders {
				return nil, ErrFolder
			}
			res.Skipped++
		case r.hiddenEntry(v, f) != "":
			if !o.SkipFolders {
				return nil, refuseSecret(r.hiddenEntry(v, f), "discard")
			}
			res.Skipped++
		case f.Index == "?":
			untracked = append(untracked, f.Path)
		default:
			e := []string{f.Path}
			if f.OrigPath != "" {
				e = append(e, f.OrigPath)
			}
			tracked = append(tracked, e)
		}
	}
	if tracked, err = r.withoutFilteredEntries(ctx, t, d, tracked, o.SkipFolders, res); err != nil {
		return nil, err
	}
	if err := r.restore(ctx, t, d, st.Head != "", slices.Concat(tracked...)); err != nil {
		return nil, err
	}
	for _, p := range untracked {
		if err := r.root.Remove(p); err != nil && !errors.Is(err, fsguard.ErrNotFound) {
			return nil, err
		}
	}
	res.Count = len(slices.Concat(tracked...)) + len(untracked)
	return res, nil
}

// withoutFilteredEntries takes out of tracked (entries of one or two paths,
// as Discard lists them) those that go through a switched-off filter driver
// (filtered.go): restoring one would write its clean bytes (an LFS
// pointer) over the file. Named, the first refuses the call; with
// skipFolders, each entry, a rename's both names, is left out and counted.
func (r *Repo) withoutFilteredEntries(ctx context.Context, t trust.Trust, d *decision, tracked [][]string, skip bool, res *StageResult) ([][]string, error) {
	f, err := r.filtered(ctx, t, d, slices.Concat(tracked...))
	if err != nil || len(f) == 0 {
		return tracked, err
	}
	var keep [][]string
	for _, e := range tracked {
		i := slices.IndexFunc(e, func(p string) bool { _, ok := f[p]; return ok })
		switch {
		case i < 0:
			keep = append(keep, e)
		case !skip:
			return nil, refuseFiltered(e[i], f[e[i]], "discard the changes of")
		default:
			res.Skipped++
		}
	}
	return keep, nil
}

// secretEntry names the secret path of a status entry (its path, or a
// rename's old path, which discarding restores too), or "" for none. The
// rule is fsguard's Root.Secret, as for stage and diff.
func (r *Repo) secretEntry(f FileStatus) string {
	for _, p := range []string{f.Path, f.OrigPath} {
		if _, secret := r.root.Secret(p); p != "" && secret {
			return p
		}
	}
	return ""
}

// hiddenEntry names the path of a status entry (as secretEntry reads it)
// that viewer v may not see as a secret (Repo.hidden, as for stage and
// diff), or "" for none. A hard link is Discard's own earlier check, from
// the Stat it already made.
func (r *Repo) hiddenEntry(v viewer, f FileStatus) string {
	for _, p := range []string{f.Path, f.OrigPath} {
		if p != "" && r.hidden(v, p, false) == secretHidden {
			return p
		}
	}
	return ""
}

// restore puts tracked paths back as HEAD has them, index and work tree. A
// file HEAD does not have (newly added) leaves both. Before the first
// commit there is no HEAD: the files are removed from the index and the work
// tree.
func (r *Repo) restore(ctx context.Context, t trust.Trust, d *decision, hasHead bool, paths []string) error {
	for _, chunk := range chunks(paths) {
		c := call{sub: subRestore, opts: []string{"--source=HEAD", "--staged", "--worktree"}, paths: chunk}
		if !hasHead {
			c = call{sub: subRm, opts: []string{"-q", "-f"}, paths: chunk}
		}
		if res, err := r.run(ctx, t, d, c); err != nil {
			return gitFailure(res, err)
		}
	}
	return nil
}
