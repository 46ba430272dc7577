package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"
)

// ConfigName is the audit's checked-in config, at the top of the
// repository. JSON because the standard library reads it (no new
// dependency in a security tool) and every CI system and editor knows it;
// each entry's "reason" is the comment JSON lacks.
const ConfigName = ".gatehouse.json"

// Config is the audit's checked-in config: what a team allows, and why.
type Config struct {
	Version int     `json:"version"`
	Allow   []Allow `json:"allow"`
}

// Allow accepts the findings of one rule (or of every rule, when Rule is
// empty) at the paths Path matches (every path, when it is empty), as
// gitleaks' allowlists do. Reason is required.
//
// Path is a glob on the finding's path, relative to the audited folder:
// * and ? stay within a name, ** spans folders, and a glob with no slash
// matches the name in any folder ("*.pem"). Letter case counts.
type Allow struct {
	Path   string `json:"path,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason"`
}

// Allowed is a finding the config accepted, kept in the report so a
// reviewer sees what was accepted and why.
type Allowed struct {
	Rule        string `json:"rule"`
	Path        string `json:"path,omitempty"`
	Fingerprint string `json:"fingerprint"`
	Reason      string `json:"reason"`
}

// maxConfig bounds the config file read.
const maxConfig = 1 << 20

// ErrConfig is a config file the audit refuses.
var ErrConfig = errors.New("not a usable gatehouse audit config")

// LoadConfig reads a config file: a regular file (never through a link,
// never a FIFO: on an untrusted pull request it is the pull request's own),
// at most 1 MiB, every entry with a reason and a rule id the audit knows.
// A missing file is an error wrapping fs.ErrNotExist.
func LoadConfig(file string) (*Config, error) {
	data, err := fsguard.ReadMetadata(file, maxConfig)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: it must be a regular file of at most 1 MiB", ErrConfig)
	}
	return ParseConfig(data)
}

// ParseConfig reads a config's bytes; see LoadConfig.
func ParseConfig(data []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt "reason" must not pass as no reason
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if c.Version != 1 {
		return nil, fmt.Errorf(`%w: want {"version": 1, "allow": [...]}`, ErrConfig)
	}
	for i, a := range c.Allow {
		n := i + 1
		switch {
		case strings.TrimSpace(a.Reason) == "":
			return nil, fmt.Errorf(`%w: allow entry %d has no "reason": say why the finding is accepted`, ErrConfig, n)
		case a.Path == "" && a.Rule == "":
			return nil, fmt.Errorf(`%w: allow entry %d names neither a "path" nor a "rule"`, ErrConfig, n)
		case a.Rule != "" && !knownRule(a.Rule):
			return nil, fmt.Errorf("%w: allow entry %d: no rule %q (docs/audit.md lists them)", ErrConfig, n, a.Rule)
		}
		if _, err := path.Match(strings.ReplaceAll(a.Path, "**", "*"), ""); err != nil {
			return nil, fmt.Errorf("%w: allow entry %d: bad glob %q", ErrConfig, n, a.Path)
		}
	}
	return &c, nil
}

func knownRule(id string) bool {
	_, ok := ruleIndex[id]
	return ok
}

// Apply drops the findings the config allows and lists them in r.Allowed.
func (c *Config) Apply(r *Report) {
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if a, ok := c.allows(f); ok {
			r.Allowed = append(r.Allowed, Allowed{Rule: f.Rule, Path: f.Path, Fingerprint: f.Fingerprint, Reason: a.Reason})
			continue
		}
		kept = append(kept, f)
	}
	r.Findings = kept
}

func (c *Config) allows(f Finding) (Allow, bool) {
	for _, a := range c.Allow {
		if (a.Rule == "" || a.Rule == f.Rule) && (a.Path == "" || globMatch(a.Path, f.Path)) {
			return a, true
		}
	}
	return Allow{}, false
}

// globMatch matches a slash-separated path: ** spans any number of
// folders, other names match as path.Match does; a glob with no slash
// matches the last name.
func globMatch(glob, name string) bool {
	if !strings.Contains(glob, "/") {
		glob = "**/" + glob
	}
	return matchParts(strings.Split(glob, "/"), strings.Split(name, "/"))
}

func matchParts(glob, name []string) bool {
	for len(glob) > 0 {
		if glob[0] == "**" {
			for len(glob) > 0 && glob[0] == "**" {
				glob = glob[1:]
			}
			if len(glob) == 0 {
				return true
			}
			for i := range name {
				if matchParts(glob, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(glob[0], name[0]); !ok {
			return false
		}
		glob, name = glob[1:], name[1:]
	}
	return len(name) == 0
}

// Baseline is the set of findings a team has accepted. Version 2 lists
// each with its rule, path and a reason a person can read and edit;
// version 1 (fingerprints only) is still read.
type Baseline struct {
	Version      int             `json:"version"`
	Findings     []BaselineEntry `json:"findings,omitempty"`
	Fingerprints []string        `json:"fingerprints,omitempty"` // version 1
}

// BaselineEntry is one accepted finding.
type BaselineEntry struct {
	Path        string `json:"path,omitempty"`
	Rule        string `json:"rule"`
	Fingerprint string `json:"fingerprint"`
	Reason      string `json:"reason"`
}

// writtenReason is the reason a new baseline entry gets; a team edits it.
const writtenReason = "accepted when the baseline was written"

// WriteBaseline saves every finding of r as accepted. Reasons a team wrote
// into an existing baseline at path are kept for the findings still there.
func WriteBaseline(file string, r *Report) error {
	old := map[string]string{}
	if prev, err := readBaseline(file); err == nil {
		for _, e := range prev.Findings {
			old[e.Fingerprint] = e.Reason
		}
	}
	b := Baseline{Version: 2, Findings: []BaselineEntry{}}
	for _, f := range r.Findings {
		reason := old[f.Fingerprint]
		if reason == "" {
			reason = writtenReason
		}
		b.Findings = append(b.Findings, BaselineEntry{Path: f.Path, Rule: f.Rule, Fingerprint: f.Fingerprint, Reason: reason})
	}
	sort.Slice(b.Findings, func(i, j int) bool {
		x, y := b.Findings[i], b.Findings[j]
		if x.Path != y.Path {
			return x.Path < y.Path
		}
		if x.Rule != y.Rule {
			return x.Rule < y.Rule
		}
		return x.Fingerprint < y.Fingerprint
	})
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// maxBaseline bounds a baseline file read.
const maxBaseline = 16 << 20

// ErrNoBaseline is a baseline file that does not exist yet: CI copied into
// a repository before anyone wrote one. The caller says so and goes on
// with nothing accepted, which fails safe (more findings, never fewer).
var ErrNoBaseline = errors.New("no baseline file yet")

func readBaseline(file string) (*Baseline, error) {
	data, err := fsguard.ReadMetadata(file, maxBaseline)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoBaseline
	}
	if err != nil {
		return nil, errBaseline
	}
	var b Baseline
	if json.Unmarshal(data, &b) != nil || b.Version != 1 && b.Version != 2 {
		return nil, errBaseline
	}
	for _, fp := range b.Fingerprints {
		b.Findings = append(b.Findings, BaselineEntry{Fingerprint: fp})
	}
	return &b, nil
}

// ApplyBaseline drops the findings a baseline accepts and counts them. A
// missing file is ErrNoBaseline, and nothing is accepted.
func ApplyBaseline(file string, r *Report) error {
	b, err := readBaseline(file)
	if err != nil {
		return err
	}
	accepted := map[string]bool{}
	for _, e := range b.Findings {
		accepted[e.Fingerprint] = true
	}
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if accepted[f.Fingerprint] {
			r.Baselined++
			continue
		}
		kept = append(kept, f)
	}
	r.Findings = kept
	return nil
}

var errBaseline = errors.New(`not a gatehouse baseline file (want {"version": 2, "findings": [{"path", "rule", "fingerprint", "reason"}]}, a regular file of at most 16 MiB)`)
