// Package audit tells a team what in a repository would make gatehouse's
// gate refuse it, which secret files it tracks, and which hazards its tree
// holds. It asks each rule's owner (gate for git config, secretfiles for
// names, fsguard for the tree) and lays their answers out as findings, each
// with a stable rule id, a level, the sentence the gate would say, and a
// location when there is one.
//
// It runs git with the closed gate's forced options and never runs a program
// the repository names, so it is safe in CI on an untrusted pull request.
package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/secretfiles"
	"github.com/gatehouse/gatehouse/trust"
)

// Level is how much a finding matters.
type Level string

const (
	Error   Level = "error"
	Warning Level = "warning"
	Note    Level = "note"
)

// Kind is what was audited.
type Kind string

const (
	Checkout Kind = "checkout" // a folder with a work tree and its git folder
	Bare     Kind = "bare"     // a bare repository: config and HEAD's names
	Folder   Kind = "folder"   // no repository: tree hazards and secret names
)

// Finding is one thing the audit found.
type Finding struct {
	Rule    string `json:"rule"`
	Level   Level  `json:"level"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"` // relative to the audited folder
	Line    int    `json:"line,omitempty"`
	// Fingerprint identifies the finding across runs (rule, path and what
	// it is about; never a line number), for baselines.
	Fingerprint string `json:"fingerprint"`
}

// Report is the whole audit.
type Report struct {
	Audited   Kind      `json:"audited"`
	Name      string    `json:"name"` // the folder's name
	Findings  []Finding `json:"findings"`
	Baselined int       `json:"baselined,omitempty"`
	// Allowed lists what the checked-in config accepted, and why.
	Allowed   []Allowed `json:"allowed,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
}

// Options place the audit.
type Options struct {
	Git  string // the git binary; "" for git on PATH
	Home string // the home folder; "" for the user's

	// broadOffForTest calls every file a broad secret rule matches an
	// error, as the audit did before it read them, so a test can show the
	// finding the content judgement lowers.
	broadOffForTest bool
}

// Run audits the folder dir.
func Run(ctx context.Context, dir string, o Options) (*Report, error) {
	home := o.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%s: no such folder", dir)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	a := &auditor{ctx: ctx, dir: canon, rep: &Report{Name: filepath.Base(canon), Findings: []Finding{}}, closed: trust.Phone(false),
		broadOffForTest: o.broadOffForTest}
	if _, err := os.Lstat(filepath.Join(canon, ".git")); err != nil {
		if repo, err := gate.OpenBare(canon, gate.Options{Git: o.Git}); err == nil {
			defer repo.Close()
			a.rep.Audited = Bare
			a.scope = secretfiles.Default().For(canon, home)
			err := a.bare(repo)
			return a.done(), err
		}
	}
	root, err := fsguard.OpenRoot(canon, fsguard.Options{Home: home})
	if err != nil {
		return nil, err
	}
	defer root.Close()
	a.root = root
	repo, err := gate.Open(root, gate.Options{Git: o.Git, Served: []string{canon}})
	switch {
	case err == nil:
		defer repo.Close()
		a.rep.Audited = Checkout
		err = a.checkout(repo)
	case errors.Is(err, gate.ErrNotCheckout):
		a.rep.Audited = Folder
		err = a.folder()
	case errors.Is(err, gate.ErrRedirected):
		a.rep.Audited = Checkout
		a.add("git-dir-redirected", ".git", "", refusal.Sentence(gate.ErrRedirected)+" ("+strings.TrimPrefix(err.Error(), gate.ErrRedirected.Error()+": ")+")")
		err = a.folder()
	default:
		return nil, err
	}
	return a.done(), err
}

type auditor struct {
	ctx    context.Context
	dir    string // the audited folder, canonical
	rep    *Report
	root   *fsguard.Root
	scope  secretfiles.Scope
	closed trust.Trust
	// contentReads counts the blobs read to judge ambiguous secret names.
	contentReads    int
	broadOffForTest bool // Options.broadOffForTest
}

// add records a finding of rule at path; about tells findings of one rule
// at one path apart (a config key, a secret rule) for the fingerprint.
func (a *auditor) add(rule, path, about, message string) {
	a.addAt(rule, path, 0, about, message)
}

func (a *auditor) addAt(rule, path string, line int, about, message string) {
	sum := sha256.Sum256([]byte(rule + "\x00" + path + "\x00" + about))
	a.rep.Findings = append(a.rep.Findings, Finding{Rule: rule, Level: Rules[ruleIndex[rule]].Level, Message: message,
		Path: path, Line: line, Fingerprint: hex.EncodeToString(sum[:8])})
}

func (a *auditor) done() *Report {
	rank := map[Level]int{Error: 0, Warning: 1, Note: 2}
	sort.SliceStable(a.rep.Findings, func(i, j int) bool {
		fi, fj := a.rep.Findings[i], a.rep.Findings[j]
		if fi.Level != fj.Level {
			return rank[fi.Level] < rank[fj.Level]
		}
		if fi.Rule != fj.Rule {
			return fi.Rule < fj.Rule
		}
		return fi.Path < fj.Path
	})
	return a.rep
}

func (a *auditor) checkout(repo *gate.Repo) error {
	// The tree scan is mostly one lstat per entry, in the kernel; git's
	// listings run beside it rather than after it.
	scan := a.startHazards()
	defer scan()
	shaped, err := a.config(repo, ".git/config")
	if err != nil {
		return err
	}
	if !shaped {
		// A git folder the gate refuses is read no further, by git or
		// by the audit: its index, objects and info/ (attributes,
		// exclude) could be links to anywhere. The git-dir-shape
		// finding says so; secret files are found by name on the tree.
		a.secretNames()
		return nil
	}
	tracked, err := repo.Tracked(a.ctx, a.closed)
	if err != nil {
		return err
	}
	a.rep.Truncated = a.rep.Truncated || tracked.Truncated
	// git check-attr runs beside the secret match of every name.
	attrs := a.startAttributes(repo, tracked.Index)
	a.secrets(repo, tracked, a.root.Secret, "is deleted from the index but still committed in HEAD")
	return attrs()
}

func (a *auditor) bare(repo *gate.Repo) error {
	if shaped, err := a.config(repo, "config"); err != nil || !shaped {
		return err // a refused folder is read no further (checkout, above)
	}
	tracked, err := repo.Tracked(a.ctx, a.closed)
	if err != nil {
		return err
	}
	a.rep.Truncated = tracked.Truncated
	a.secrets(repo, tracked, a.scope.Match, "is committed in HEAD")
	return nil
}

func (a *auditor) folder() error {
	a.secretNames()
	a.startHazards()()
	return nil
}

// secretNames reports every name on the tree that a secret rule matches,
// tracked or not: for a folder git is not asked about.
func (a *auditor) secretNames() {
	names, truncated := a.root.Names(a.ctx, 5_000_000)
	a.rep.Truncated = a.rep.Truncated || truncated
	for _, n := range names {
		if r, ok := a.root.Secret(n); ok {
			a.add("secret-file", n, r.Pattern,
				fmt.Sprintf("matches the secret rule %s (%s); below the full grant a phone sees its name, never its content", r.Pattern, r.Reason))
		}
	}
}

// config lays out what each gate refuses, entry by entry, and the
// credentials the config stores. where is the config file's path relative
// to the audited folder. shaped is false when the gate refuses the git
// folder's shape: then nothing in it is read, the config included (git
// would read it through whatever the folder holds).
func (a *auditor) config(repo *gate.Repo, where string) (shaped bool, err error) {
	rep, err := repo.AuditConfig(a.ctx, a.closed)
	if err != nil {
		return false, err
	}
	if rep.GitFolder != "" {
		a.add("git-dir-shape", ".git", "", rep.GitFolder)
		return false, nil
	}
	if rep.TooLarge {
		a.add("config-too-large", where, "", rep.ReadSentence)
	}
	text, _ := fsguard.ReadMetadata(filepath.Join(a.dir, filepath.FromSlash(where)), maxConfigRead) // for line numbers only
	for _, f := range rep.Findings {
		rule := "config-change-refused"
		if f.Gate == "read" {
			rule = "config-read-refused"
			switch {
			case f.Key == "extensions.partialclone" || strings.HasSuffix(f.Key, ".promisor"):
				rule = "partial-clone"
			case f.Key == "core.worktree":
				rule = "core-worktree"
			case strings.HasPrefix(f.Key, "include."), strings.HasPrefix(f.Key, "includeif."):
				rule = "config-include"
			}
		}
		a.addAt(rule, where, configLine(text, f.Key), maskKey(f.Key), configSentence(f))
	}
	if err := a.storedCredentials(repo, where, text); err != nil {
		return false, err
	}
	if rep.Submodules {
		path, line := ".gitmodules", 0
		if repo.Bare() {
			path = "modules"
		} else if data, err := a.root.ReadFile(trust.Full, ".gitmodules", maxConfigRead); err == nil {
			line = firstSection(data, "submodule")
		}
		a.addAt("submodules", path, line, "", submoduleSentence)
	}
	return true, nil
}

// storedCredentials reports each token or password the local config holds,
// masked: never the secret itself, in a message or a fingerprint.
func (a *auditor) storedCredentials(repo *gate.Repo, where string, text []byte) error {
	entries, err := repo.LocalConfig(a.ctx, a.closed)
	if errors.Is(err, gate.ErrRefused) {
		return nil // git cannot read the config; the read gate finding says so
	}
	if err != nil {
		return err
	}
	for _, c := range credentials(entries) {
		msg := c.key + " " + c.what
		if c.shown != "" {
			msg += " (" + c.shown + ")"
		}
		msg += ": anything that reads the git folder, and every copy of it, has the secret. Remove it from the config and rotate it; keep it in a credential helper instead."
		a.addAt("config-credential", where, configLineMasked(text, c.key), c.key, msg)
	}
	return nil
}

// firstSection is the line of the first [section ...] header, 0 if none.
func firstSection(data []byte, section string) int {
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if s := strings.TrimSpace(string(line)); strings.HasPrefix(s, "[") && strings.HasPrefix(sectionOf(s)+".", section+".") {
			return n
		}
	}
	return 0
}

// configLineMasked finds a key whose shown form is masked: it compares the
// masked form of each key in the file.
func configLineMasked(text []byte, masked string) int {
	return configLineWhere(text, func(k string) bool { return k == masked || maskKey(k) == masked })
}

// secrets checks the tracked names; headOnly says how a name that only
// HEAD has is tracked. An ambiguous name (a .pem, a .key, a service-account
// JSON) whose blob git holds is judged by its first bytes too: a
// certificate or a public key is a note, a private key says so. So is a
// name a broad rule matched (*secrets*): empty, or a git ref or reflog
// where git keeps those, it is a note (broad.go).
func (a *auditor) secrets(repo *gate.Repo, t *gate.Tracked, match func(string) (secretfiles.Rule, bool), headOnly string) {
	for _, list := range []struct {
		names []string
		how   string
	}{{t.Index, "is tracked"}, {t.HeadOnly, headOnly}} {
		for _, n := range list.names {
			r, ok := match(n)
			if !ok {
				continue
			}
			rule := fmt.Sprintf("the secret rule %s (%s)", r.Pattern, r.Reason)
			switch kind, what := a.content(repo, n, r); kind {
			case contentPublic:
				a.add("secret-name-public-content", n, r.Pattern,
					fmt.Sprintf("%s and matches %s, but git holds %s in it, no private key: nothing to rotate", list.how, rule, what))
			case contentInert:
				a.add("secret-name-public-content", n, r.Pattern,
					fmt.Sprintf("%s and matches %s, a rule for a word anywhere in a name, but git holds %s in it: nothing a secret could be, nothing to rotate", list.how, rule, what))
			case contentPrivate:
				a.add("secret-tracked", n, r.Pattern,
					fmt.Sprintf("%s and matches %s, and git holds %s in it: everyone who clones the repository has it", list.how, rule, what))
			default:
				a.add("secret-tracked", n, r.Pattern,
					fmt.Sprintf("%s and matches %s: everyone who clones the repository has it", list.how, rule))
			}
		}
	}
}

// content judges an ambiguous secret name, or one a broad rule matched,
// by the blob git holds for it, read through the closed gate and bounded;
// contentUnknown when the name is neither or git holds no blob for it
// (deleted from the index).
func (a *auditor) content(repo *gate.Repo, name string, r secretfiles.Rule) (content, string) {
	checked := contentChecked(name, ruleReason(r.Reason))
	broad := r.Broad && !a.broadOffForTest
	if !checked && !broad || a.contentReads >= maxContentReads {
		return contentUnknown, ""
	}
	a.contentReads++
	data, truncated, err := repo.ReadTrackedBlob(a.ctx, a.closed, name, maxContent)
	if err != nil {
		return contentUnknown, ""
	}
	if broad {
		if kind, what := judgeBroad(name, data, truncated); kind != contentUnknown {
			return kind, what
		}
	}
	if !checked {
		return contentUnknown, ""
	}
	return judge(name, data, truncated)
}

// hazardSentences: what gatehouse says of each, or does.
var hazardSentences = map[fsguard.HazardKind]string{
	fsguard.HazardHardLink:       fsguard.ErrHardLink.Sentence(),
	fsguard.HazardSpecial:        fsguard.ErrNotRegular.Sentence(),
	fsguard.HazardSymlinkOutside: fsguard.ErrOutsideRoot.Sentence(),
	fsguard.HazardSymlinkSecret:  fsguard.ErrSecret.Sentence(),
	fsguard.HazardSymlinkGit:     fsguard.ErrGitPath.Sentence(),
	fsguard.HazardSymlinkLoop:    fsguard.ErrTooManyLinks.Sentence(),
	fsguard.HazardGitLookalike:   fsguard.ErrGitPath.Sentence() + " (on macOS and Windows this name is .git)",
	fsguard.HazardNestedGit:      "Another repository is inside this one; gatehouse serves only the top one.",
	fsguard.HazardControlChar:    "A name with a control character can fool a terminal or a tool that prints it.",
	fsguard.HazardLeadingDash:    "A tool that puts this name where an option goes reads it as one; gatehouse passes names after --.",
}

// startHazards starts the tree scan and returns the function that waits
// for it and adds its findings.
func (a *auditor) startHazards() (wait func()) {
	var found []fsguard.Hazard
	var truncated bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		found, truncated = a.root.Hazards(a.ctx)
	}()
	return func() {
		<-done
		a.rep.Truncated = a.rep.Truncated || truncated
		for _, h := range found {
			msg := hazardSentences[h.Kind]
			if h.Detail != "" {
				msg = h.Detail + ". " + msg
			}
			a.add(string(h.Kind), h.Path, "", msg)
		}
	}
}
