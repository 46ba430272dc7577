package gate

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// maxStatusFiles bounds the files one status reports.
const maxStatusFiles = 100_000

// Status is a checkout's state.
type Status struct {
	Branch   string       `json:"branch"` // "" when detached
	Detached bool         `json:"detached,omitempty"`
	Head     string       `json:"head,omitempty"` // commit id, "" before the first commit
	Upstream string       `json:"upstream,omitempty"`
	Ahead    int          `json:"ahead"`
	Behind   int          `json:"behind"`
	Files    []FileStatus `json:"files"`
	// Truncated: more files changed than one status reports.
	Truncated bool `json:"truncated,omitempty"`
	// Next is the offset of the next page of Files, 0 at the end (set by
	// the caller that cuts the pages; Files keep git's order).
	Next int `json:"next,omitempty"`
}

// FileStatus is one changed path. Index and Worktree are git's status
// letters (M, A, D, R, C, T, U), "." for unchanged, "?" for untracked.
type FileStatus struct {
	Path      string `json:"path"`
	OrigPath  string `json:"origPath,omitempty"` // the old name of a staged rename or copy
	Index     string `json:"index"`
	Worktree  string `json:"worktree"`
	Submodule bool   `json:"submodule,omitempty"`
	// Secret: the path (or a rename's old path) is a secret file, which a
	// device below full may neither read, stage nor discard; set by Status
	// so a device can show that before the tap.
	Secret bool `json:"secret,omitempty"`
	// Unmerged: a conflicted path (git's "u" record), whose two letters say
	// which sides changed it; it is resolved, not staged or discarded.
	Unmerged bool `json:"unmerged,omitempty"`
}

// Status runs git status (porcelain v2) through the gate. With the switch
// off it needs the Read gate: every filter the checkout's config defines is
// switched off, submodules are ignored, and a config that could run a
// program even during a status is refused.
func (r *Repo) Status(ctx context.Context, t trust.Trust) (*Status, error) {
	d, err := r.decide(ctx, t, readGate, "see its status")
	if err != nil {
		return nil, err
	}
	st, err := r.status(ctx, t, d)
	if err != nil {
		return nil, err
	}
	for i := range st.Files {
		st.Files[i].Secret = r.secretEntry(st.Files[i]) != ""
	}
	return st, nil
}

// status is the git status call every operation that needs the list of
// changes shares, after its own decision.
func (r *Repo) status(ctx context.Context, t trust.Trust, d *decision) (*Status, error) {
	res, monitored, err := r.monitoredStatus(ctx, t, d)
	if !monitored {
		res, err = r.run(ctx, t, d, call{sub: subStatus, opts: statusOpts})
	}
	if err != nil {
		return nil, err
	}
	st := parseStatus(res.stdout)
	st.Truncated = st.Truncated || res.truncated
	return st, nil
}

// statusOpts are git status's options: porcelain v2, NUL-separated, with
// the branch and every untracked file.
var statusOpts = []string{"--porcelain=v2", "-z", "--branch", "--untracked-files=all"}

// parseStatus reads porcelain v2 with -z.
func parseStatus(out []byte) *Status {
	st := &Status{Files: []FileStatus{}}
	recs := bytes.Split(out, []byte{0})
	for i := 0; i < len(recs); i++ {
		rec := string(recs[i])
		if rec == "" {
			continue
		}
		if len(st.Files) >= maxStatusFiles {
			st.Truncated = true
			break
		}
		switch rec[0] {
		case '#':
			parseBranchHeader(st, rec)
		case '1':
			if f := fields(rec, 9); f != nil {
				st.Files = append(st.Files, changed(f[1], f[2], f[8]))
			}
		case '2':
			if f := fields(rec, 10); f != nil && i+1 < len(recs) {
				fs := changed(f[1], f[2], f[9])
				i++
				fs.OrigPath = string(recs[i])
				st.Files = append(st.Files, fs)
			}
		case 'u':
			if f := fields(rec, 11); f != nil {
				fs := changed(f[1], f[2], f[10])
				fs.Unmerged = true
				st.Files = append(st.Files, fs)
			}
		case '?':
			st.Files = append(st.Files, FileStatus{Path: rec[2:], Index: "?", Worktree: "?"})
		}
	}
	return st
}

// fields splits a status record into n fields; the last is the path, which
// may hold spaces.
func fields(rec string, n int) []string {
	f := strings.SplitN(rec, " ", n)
	if len(f) != n {
		return nil
	}
	return f
}

func changed(xy, subm, path string) FileStatus {
	return FileStatus{Path: path, Index: xy[:1], Worktree: xy[1:2], Submodule: strings.HasPrefix(subm, "S")}
}

func parseBranchHeader(st *Status, rec string) {
	key, val, _ := strings.Cut(strings.TrimPrefix(rec, "# "), " ")
	switch key {
	case "branch.oid":
		if val != "(initial)" {
			st.Head = val
		}
	case "branch.head":
		if val == "(detached)" {
			st.Detached = true
		} else {
			st.Branch = val
		}
	case "branch.upstream":
		st.Upstream = val
	case "branch.ab":
		a, b, _ := strings.Cut(val, " ")
		st.Ahead, _ = strconv.Atoi(strings.TrimPrefix(a, "+"))
		st.Behind, _ = strconv.Atoi(strings.TrimPrefix(b, "-"))
	}
}

// Changes is the short view of a checkout: branch, ahead and behind, and
// each change once per side (staged or not).
type Changes struct {
	Branch    string   `json:"branch"`
	Ahead     int      `json:"ahead"`
	Behind    int      `json:"behind"`
	Files     []Change `json:"files"`
	Truncated bool     `json:"truncated,omitempty"`
	// Next is the offset of the next page of Files, 0 at the end.
	Next int `json:"next,omitempty"`
}

// Change is one side of a changed file: Status is git's two-letter code
// ("M ", " M", "??").
type Change struct {
	Path   string `json:"path"`
	Status string `json:"status"`
	Staged bool   `json:"staged"`
}

// Changes is Status in the shape the page's changes screen draws
// (git.changes in docs/methods.md).
func (r *Repo) Changes(ctx context.Context, t trust.Trust) (*Changes, error) {
	st, err := r.Status(ctx, t)
	if err != nil {
		return nil, err
	}
	c := &Changes{Branch: st.Branch, Ahead: st.Ahead, Behind: st.Behind, Files: []Change{}, Truncated: st.Truncated}
	for _, f := range st.Files {
		code := strings.ReplaceAll(f.Index+f.Worktree, ".", " ")
		if f.Index == "?" {
			c.Files = append(c.Files, Change{Path: f.Path, Status: "??"})
			continue
		}
		if f.Unmerged { // one row: it is resolved, not staged
			c.Files = append(c.Files, Change{Path: f.Path, Status: code})
			continue
		}
		if f.Index != "." {
			c.Files = append(c.Files, Change{Path: f.Path, Status: code, Staged: true})
		}
		if f.Worktree != "." {
			c.Files = append(c.Files, Change{Path: f.Path, Status: code})
		}
	}
	return c, nil
}
