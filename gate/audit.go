package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// ConfigReport is what the gates would refuse in a checkout, for the audit:
// the same decision a phone's operation would meet, laid out entry by entry.
type ConfigReport struct {
	Findings     []Finding `json:"findings"`
	Submodules   bool      `json:"submodules,omitempty"`
	PartialClone bool      `json:"partialClone,omitempty"`
	TooLarge     bool      `json:"tooLarge,omitempty"`
	// GitFolder is the closed gate's refusal of the git folder's shape (a
	// symlink, FIFO, device or hard-linked file where git keeps state, or
	// borrowed objects), "" when it has none. The config is then not
	// listed: git would read it through whatever the folder holds.
	GitFolder string `json:"gitFolder,omitempty"`
	// ReadSentence and ChangeSentence are what a phone with the switch off
	// is told by each gate ("" when that gate lets it through).
	ReadSentence   string `json:"readSentence,omitempty"`
	ChangeSentence string `json:"changeSentence,omitempty"`
}

// AuditConfig lists, for the closed gate t (a phone with the switch off),
// every local and worktree config entry the Read or the Change gate refuses,
// with why, plus submodules and a partial clone. It starts at most one git
// process (two with per-worktree config), as a decision does.
func (r *Repo) AuditConfig(ctx context.Context, t trust.Trust) (*ConfigReport, error) {
	if !t.Closed() {
		return &ConfigReport{Findings: []Finding{}}, nil
	}
	if err := r.checkLayout("use Git on this checkout"); err != nil {
		s := refusal.Sentence(err)
		return &ConfigReport{Findings: []Finding{}, GitFolder: s, ReadSentence: s, ChangeSentence: s}, nil
	}
	d, err := r.cachedDecision(ctx, t)
	if err != nil && !errors.Is(err, ErrRefused) {
		return nil, err
	}
	rep := &ConfigReport{Findings: []Finding{}, Submodules: r.hasSubmodules()}
	if err != nil { // git could not read the config at all
		rep.ReadSentence, rep.ChangeSentence = refusal.Sentence(err), refusal.Sentence(err)
		return rep, nil
	}
	rep.Findings = append(rep.Findings, d.findings...)
	rep.TooLarge = d.tooLarge
	for _, f := range d.findings {
		if f.Key == "extensions.partialclone" || (len(f.Key) > 9 && f.Key[len(f.Key)-9:] == ".promisor") {
			rep.PartialClone = true
		}
	}
	const action = "use Git on this checkout"
	if err := d.check(readGate, action); err != nil {
		rep.ReadSentence = refusal.Sentence(err)
	}
	if err := d.check(changeGate, action); err != nil {
		rep.ChangeSentence = refusal.Sentence(err)
	} else if rep.Submodules {
		rep.ChangeSentence = refusal.Sentence(refuseSubmodules(action))
	}
	return rep, nil
}

// maxTracked bounds the names one listing returns.
const maxTracked = 2_000_000

// Tracked is what a repository tracks: the index's names, and the names
// HEAD has that the index no longer does (deleted but committed). A bare
// repository has no index; all its names are HEAD's.
type Tracked struct {
	Index     []string `json:"index"`
	HeadOnly  []string `json:"headOnly"`
	Truncated bool     `json:"truncated,omitempty"`
}

// auditDecision is the decision an audit lists with: the closed gate's
// forced options and overrides (every filter off), but none of its
// refusals, because the audit must see a repository the gate refuses. A
// listing runs none of the programs the decision's refusals are about.
func (r *Repo) auditDecision(ctx context.Context, t trust.Trust) (*decision, error) {
	if !t.Closed() {
		return openDecision, nil
	}
	d, err := r.cachedDecision(ctx, t)
	if errors.Is(err, ErrRefused) {
		return &decision{}, nil // git cannot read the config; list with no overrides
	}
	return d, err
}

// Tracked lists the tracked names, for the audit's secret check. For a
// closed t it runs with the closed gate's options whatever the config says.
func (r *Repo) Tracked(ctx context.Context, t trust.Trust) (*Tracked, error) {
	d, err := r.auditDecision(ctx, t)
	if err != nil {
		return nil, err
	}
	out := &Tracked{Index: []string{}, HeadOnly: []string{}}
	if r.workTree == "" {
		res, err := r.run(ctx, t, d, call{sub: subLsTree, opts: []string{"-r", "-z", "--name-only", "HEAD"}, okExit: []int{128}})
		if err != nil {
			return nil, err
		}
		out.HeadOnly, out.Truncated = nulList(res.stdout), res.truncated
		return out, nil
	}
	res, err := r.run(ctx, t, d, call{sub: subLsFiles, opts: []string{"-z"}})
	if err != nil {
		return nil, err
	}
	out.Index, out.Truncated = nulList(res.stdout), res.truncated
	res, err = r.run(ctx, t, d, call{sub: subDiffIndex, opts: []string{"--cached", "--name-only", "-z", "--no-renames", "--diff-filter=D", "HEAD"},
		okExit: []int{128}}) // no HEAD yet: nothing committed
	if err != nil {
		return nil, err
	}
	out.HeadOnly = nulList(res.stdout)
	out.Truncated = out.Truncated || res.truncated
	return out, nil
}

func nulList(b []byte) []string {
	out := []string{}
	for p := range bytes.SplitSeq(b, []byte{0}) {
		if len(p) > 0 {
			if len(out) >= maxTracked {
				break
			}
			out = append(out, string(p))
		}
	}
	return out
}

// AttributeUse is a .gitattributes line that makes files use a driver the
// checkout's own config defines: the repository chooses the program.
type AttributeUse struct {
	Path   string `json:"path"` // the attributes file, relative to the checkout
	Line   int    `json:"line"`
	Kind   string `json:"kind"` // filter, diff or merge
	Driver string `json:"driver"`
}

// maxAttributes bounds one attributes file read.
const maxAttributes = 1 << 20

// AttributeUses finds attributes lines (in the tracked .gitattributes
// files, and the git folder's info/attributes when the gate accepts the
// folder's shape) naming a filter, diff or merge driver that the local
// config defines. files are the tracked names (from Tracked).
func (r *Repo) AttributeUses(ctx context.Context, t trust.Trust, files []string) ([]AttributeUse, error) {
	d, err := r.auditDecision(ctx, t)
	if err != nil {
		return nil, err
	}
	if len(d.defined) == 0 {
		return []AttributeUse{}, nil
	}
	out := []AttributeUse{}
	for _, f := range files {
		if f != ".gitattributes" && !strings.HasSuffix(f, "/.gitattributes") || r.root == nil {
			continue
		}
		data, err := r.root.ReadFile(trust.Full, f, maxAttributes)
		if err != nil {
			continue // a link, a FIFO, a hard link: the tree scan reports those
		}
		out = append(out, attributeUses(f, data, d.defined)...)
	}
	// git reads $GIT_COMMON_DIR/info/attributes. It is read only when the
	// gate accepts the folder's shape: a symlinked info/ would be followed
	// to wherever it leads (ReadMetadata refuses a link only at the last
	// step), and the shape refusal is the audit's own finding.
	if r.checkLayout("use Git on this checkout") != nil {
		return out, nil
	}
	if data, err := fsguard.ReadMetadata(filepath.Join(r.commonDir, "info", "attributes"), maxAttributes); err == nil {
		out = append(out, attributeUses(".git/info/attributes", data, d.defined)...)
	}
	return out, nil
}

// attributeUses reads one attributes file: "pattern attr attr..." lines;
// an attribute "filter=NAME" (and diff=, merge=) names a driver.
func attributeUses(path string, data []byte, defined map[string]map[string]bool) []AttributeUse {
	var out []AttributeUse
	for i, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		for _, attr := range fields[1:] {
			kind, name, ok := strings.Cut(attr, "=")
			if ok && defined[kind][name] {
				out = append(out, AttributeUse{Path: path, Line: i + 1, Kind: kind, Driver: name})
			}
		}
	}
	return out
}

// OpenBare opens a bare repository (the folder is the git folder itself)
// for the audit: its config and its HEAD's names, no work tree.
func OpenBare(dir string, opts Options) (*Repo, error) {
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	for _, need := range []string{"HEAD", "objects", "refs"} {
		fi, err := os.Lstat(filepath.Join(canon, need))
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return nil, ErrNotCheckout
		}
	}
	if _, err := os.Lstat(filepath.Join(canon, "commondir")); err == nil {
		return nil, fmt.Errorf("%w: commondir in a bare repository", ErrRedirected)
	}
	gitPath, err := gitBinary(opts)
	if err != nil {
		return nil, err
	}
	r := &Repo{git: gitPath, gitDir: canon, commonDir: canon, maxTime: opts.Timeout, home: opts.Home, wall: wall{memory: memoryLimit(opts)}}
	if r.common, err = openHeld(canon); err != nil {
		return nil, err
	}
	return r, nil
}

// Bare reports whether the repository has no work tree.
func (r *Repo) Bare() bool { return r.workTree == "" }
