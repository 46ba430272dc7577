package gate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
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
	// The two listings read the same index and need nothing of each other:
	// they run side by side.
	var head *result
	var headErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		head, headErr = r.run(ctx, t, d, call{sub: subDiffIndex, opts: []string{"--cached", "--name-only", "-z", "--no-renames", "--diff-filter=D", "HEAD"},
			okExit: []int{128}}) // no HEAD yet: nothing committed
	}()
	res, err := r.run(ctx, t, d, call{sub: subLsFiles, opts: []string{"-z"}})
	<-done
	if err != nil {
		return nil, err
	}
	if headErr != nil {
		return nil, headErr
	}
	out.Index, out.HeadOnly = nulList(res.stdout), nulList(head.stdout)
	out.Truncated = res.truncated || head.truncated
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

// AttributeUse is a filter, diff or merge driver that the attributes of
// tracked files select, as git check-attr answers for them, and every entry
// of git's config that defines it.
type AttributeUse struct {
	Kind   string `json:"kind"`   // filter, diff or merge
	Driver string `json:"driver"` // the attribute's value: the driver's name
	// Files are the first tracked files that select it (maxUseFiles at
	// most); Count is how many do.
	Files []string `json:"files"`
	Count int      `json:"count"`
	// Path and Line place the attributes line naming it (kind=driver), in
	// the git folder's info/attributes or a .gitattributes above Files[0];
	// Path is "" when none does (the user's own attributes file selects it).
	// git decided which files select the driver; the line only places it.
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	// Defined is every config entry of the driver (its section
	// kind.driver) with the scope and file git read it from; empty when no
	// config defines it, and then git runs no program for it.
	Defined []DriverEntry `json:"defined"`
}

// DriverEntry is one config entry of a driver, as git config --list
// --show-scope --show-origin names it.
type DriverEntry struct {
	Key    string `json:"key"`
	Scope  string `json:"scope"`  // system, global, local or worktree; an included file has its includer's
	Origin string `json:"origin"` // the file git read it from: the included one for an include
	// Conditional: a file the user's config includes under a condition
	// (includeIf) that does not hold for this checkout; git reads it where
	// it holds (another branch, a worktree), so the gate switches its
	// drivers off too (everyUserInclude).
	Conditional bool `json:"conditional,omitempty"`
}

// Local reports whether the repository's own config (or a file it
// includes) holds the entry.
func (e DriverEntry) Local() bool { return e.Scope == "local" || e.Scope == "worktree" }

// Attributes is what AttributeUses found.
type Attributes struct {
	Uses []AttributeUse `json:"uses"`
	// Truncated: not every tracked file was asked about, or not every
	// driver or config entry was kept (the bounds in attrBounds).
	Truncated bool `json:"truncated,omitempty"`
}

// attrBounds bound what one AttributeUses asks and keeps: the files one
// git check-attr is given, the check-attr runs in all (a batch whose answer
// passes subCheckAttr's output bound is asked again in halves, and a file
// whose answer alone passes it is left out), the drivers kept, the entries
// kept per driver, and the attributes files read to place the findings.
type attrBounds struct {
	batchFiles, batchBytes, runs, uses, entries, placeReads int
	maxOut                                                  int // check-attr's output bound
}

var defaultAttrBounds = attrBounds{batchFiles: 50_000, batchBytes: 4 << 20, runs: 64, uses: 1000, entries: 16, placeReads: 128,
	maxOut: subCheckAttr.maxOut}

// maxUseFiles is how many of the files selecting a driver are named.
const maxUseFiles = 3

// maxAttributes bounds one attributes file read to place a finding.
const maxAttributes = 1 << 20

// AttributeUses asks git which filter, diff and merge drivers the
// attributes of files (the tracked names, from Tracked) select, and where
// git's config defines each. Both answers are git's own, run through the
// gate: git check-attr reads every attributes file as git does for these
// files (.gitattributes in the work tree, info/attributes, the user's
// core.attributesFile, macros) and runs no driver; git config --list
// --show-scope --show-origin reads every config file as git does, the
// user's includes among them. Nothing runs when the gate refuses the git
// folder's shape: git would read it through whatever the folder holds.
func (r *Repo) AttributeUses(ctx context.Context, t trust.Trust, files []string) (*Attributes, error) {
	return r.attributeUses(ctx, t, files, defaultAttrBounds)
}

func (r *Repo) attributeUses(ctx context.Context, t trust.Trust, files []string, b attrBounds) (*Attributes, error) {
	out := &Attributes{Uses: []AttributeUse{}}
	if len(files) == 0 || r.checkLayout("use Git on this checkout") != nil {
		return out, nil // the audit's git-dir-shape finding says why
	}
	d, err := r.auditDecision(ctx, t)
	if err != nil {
		return nil, err
	}
	sel, err := r.selectedDrivers(ctx, t, d, files, b, out)
	if err != nil {
		return nil, err
	}
	if len(sel) == 0 {
		return out, nil // no config is listed for no driver
	}
	defined, err := r.driverEntries(ctx, t, d, b, out)
	if err != nil {
		return nil, err
	}
	place := r.newPlacer(b.placeReads)
	for _, k := range slices.SortedFunc(maps.Keys(sel), compareDriver) {
		u := AttributeUse{Kind: k.kind, Driver: k.name, Files: sel[k].files, Count: sel[k].count, Defined: defined[k]}
		if u.Defined == nil {
			u.Defined = []DriverEntry{}
		}
		u.Path, u.Line = place.line(k, u.Files[0])
		out.Uses = append(out.Uses, u)
	}
	return out, nil
}

// driverKey names a driver: its kind (filter, diff, merge) and name.
type driverKey struct{ kind, name string }

func compareDriver(a, b driverKey) int {
	return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name))
}

// selection is the files that select one driver.
type selection struct {
	files []string
	count int
}

// selectedDrivers asks git check-attr --all which attributes each file
// has, b.batchFiles files (or b.batchBytes of names) at a time, and keeps
// the filter, diff and merge drivers they name. --all prints only the
// attributes a file has, so a repository with few attributes gives a short
// answer (three named attributes would print "unspecified" three times a
// file); a repository's attributes can still make it long, and a batch
// whose answer was cut is asked again in halves (see attrBounds).
func (r *Repo) selectedDrivers(ctx context.Context, t trust.Trust, d *decision, files []string, b attrBounds, out *Attributes) (map[driverKey]*selection, error) {
	sel := map[driverKey]*selection{}
	size, checkAttr := b.batchFiles, subCheckAttr
	checkAttr.maxOut = b.maxOut
	for start, runs := 0, 0; start < len(files); runs++ {
		if runs == b.runs {
			out.Truncated = true
			break
		}
		var in bytes.Buffer
		end := start
		for end < len(files) && end-start < size && (end == start || in.Len()+len(files[end]) < b.batchBytes) {
			in.WriteString(files[end])
			in.WriteByte(0)
			end++
		}
		res, err := r.run(ctx, t, d, call{sub: checkAttr, opts: []string{"--all", "-z", "--stdin"}, stdin: &in})
		if err != nil {
			return nil, gitFailure(res, err)
		}
		switch {
		case res.truncated && end-start > 1:
			size = (end - start) / 2 // ask again, in halves
			continue
		case res.truncated: // one file's attributes alone pass the bound
			out.Truncated = true
		case !addSelections(sel, res.stdout, b.uses):
			out.Truncated = true
		}
		start = end
	}
	return sel, nil
}

// addSelections reads check-attr -z's "path\0attribute\0value\0" records:
// a filter, diff or merge value other than set, unset or unspecified names
// a driver. It reports false when a driver past the first maxUses was left
// out.
func addSelections(sel map[driverKey]*selection, stdout []byte, maxUses int) bool {
	complete := true
	nul := []byte{0}
	for rest := stdout; ; {
		path, rest1, ok1 := bytes.Cut(rest, nul)
		attr, rest2, ok2 := bytes.Cut(rest1, nul)
		value, rest3, ok3 := bytes.Cut(rest2, nul)
		if !ok1 || !ok2 || !ok3 {
			return complete
		}
		rest = rest3
		switch string(attr) {
		case "filter", "diff", "merge":
		default:
			continue
		}
		switch string(value) {
		case "", "unspecified", "unset", "set":
			continue // no driver named: git's built-in behaviour
		}
		k := driverKey{string(attr), string(value)}
		s := sel[k]
		if s == nil {
			if len(sel) >= maxUses {
				complete = false
				continue
			}
			s = &selection{}
			sel[k] = s
		}
		if s.count++; len(s.files) < maxUseFiles {
			s.files = append(s.files, string(path))
		}
	}
}

// driverEntries lists git's whole config with each entry's scope and file
// (the call the decision makes for the user's drivers, addUserDrivers),
// then the files the user's config includes under a condition that does
// not hold here (everyUserInclude, as the decision follows them), and keeps
// the entries of filter, diff and merge drivers, by driver. The "command"
// scope is gatehouse's own -c options (the switched-off filters).
func (r *Repo) driverEntries(ctx context.Context, t trust.Trust, d *decision, b attrBounds, out *Attributes) (map[driverKey][]DriverEntry, error) {
	res, err := r.run(ctx, t, d, call{sub: subConfig, opts: []string{"--list", "--show-scope", "--show-origin", "-z"}, okExit: []int{1}})
	if err != nil {
		return nil, gitFailure(res, err)
	}
	out.Truncated = out.Truncated || res.truncated
	listed := parseScoped(res.stdout)
	var read []string
	for _, e := range listed {
		if o, ok := strings.CutPrefix(e.origin, "file:"); ok && (e.scope == "system" || e.scope == "global") && !slices.Contains(read, o) {
			read = append(read, o)
		}
	}
	conditional, _ := r.everyUserInclude(ctx, t, d, listed, read)
	defined := map[driverKey][]DriverEntry{}
	for i, e := range slices.Concat(listed, conditional) {
		sec, rest, _ := strings.Cut(e.key, ".")
		dot := strings.LastIndexByte(rest, '.')
		if e.scope == "command" || dot <= 0 || (sec != "filter" && sec != "diff" && sec != "merge") {
			continue
		}
		k := driverKey{sec, rest[:dot]}
		if len(defined[k]) >= b.entries {
			out.Truncated = true
			continue
		}
		origin, _ := strings.CutPrefix(e.origin, "file:")
		defined[k] = append(defined[k], DriverEntry{Key: e.key, Scope: e.scope, Origin: origin, Conditional: i >= len(listed)})
	}
	return defined, nil
}

// placer finds the attributes line that names a driver, to place a
// finding. It reads at most maxReads files, each once, and keeps of each
// only the first line of every filter=, diff= and merge= it names.
type placer struct {
	r        *Repo
	files    map[string]map[string]int // file → "kind=driver" → line
	maxReads int
}

func (r *Repo) newPlacer(maxReads int) *placer {
	return &placer{r: r, files: map[string]map[string]int{}, maxReads: maxReads}
}

// line looks in the git folder's info/attributes, then in the .gitattributes
// of file's folder and each folder above it: the order in which git lets
// lines override (gitattributes(5)), so the first line naming kind=driver
// is the likeliest to be the one git used. It returns "" when none does.
func (p *placer) line(k driverKey, file string) (string, int) {
	places := []string{".git/info/attributes"}
	for dir := path.Dir(file); ; dir = path.Dir(dir) {
		places = append(places, path.Join(dir, ".gitattributes"))
		if dir == "." || dir == "/" {
			break
		}
	}
	for _, place := range places {
		if n := p.names(place)[k.kind+"="+k.name]; n > 0 {
			return place, n
		}
	}
	return "", 0
}

// names reads one attributes file: info/attributes from the common folder,
// where git reads it (the folder's shape is checked before), a
// .gitattributes through the checkout's root, which opens no link, FIFO or
// device.
func (p *placer) names(file string) map[string]int {
	if m, ok := p.files[file]; ok || len(p.files) >= p.maxReads {
		return m
	}
	var data []byte
	if file == ".git/info/attributes" {
		data, _ = fsguard.ReadMetadata(filepath.Join(p.r.commonDir, "info", "attributes"), maxAttributes)
	} else if p.r.root != nil {
		data, _ = p.r.root.ReadFile(trust.Full, file, maxAttributes)
	}
	m := map[string]int{}
	n := 0
	for l := range bytes.Lines(data) {
		n++
		fields := strings.Fields(string(l))
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		for _, f := range fields[1:] {
			if kind, _, ok := strings.Cut(f, "="); ok && (kind == "filter" || kind == "diff" || kind == "merge") && m[f] == 0 {
				m[f] = n
			}
		}
	}
	p.files[file] = m
	return m
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
	r := &Repo{git: gitPath, gitDir: canon, commonDir: canon, maxTime: opts.Timeout, home: opts.Home, wall: wall{memory: memoryLimit(opts), proofs: opts.WallProofs}}
	if r.common, err = openHeld(canon); err != nil {
		return nil, err
	}
	return r, nil
}

// Bare reports whether the repository has no work tree.
func (r *Repo) Bare() bool { return r.workTree == "" }
