package audit

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/sys/unix"
)

func rules(r *Report) map[string][]string {
	out := map[string][]string{}
	for _, f := range r.Findings {
		out[f.Rule] = append(out[f.Rule], f.Path)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

func run(t *testing.T, dir string) *Report {
	t.Helper()
	r, err := Run(context.Background(), dir, Options{Home: "/nonexistent-home"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A checkout with one of every finding kind.
func TestEveryFindingKind(t *testing.T) {
	gittest.Home(t, "")
	prog, marker := gittest.PayloadFile(t)
	outside := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(outside, []byte("KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := gittest.Init(t, map[string]string{
		"a.txt": "a\n", ".env": "S=1\n", "deploy/id_rsa": "k\n", ".gitattributes": "*.txt filter=evil diff=evil\n",
		"-rf": "x", "sub/.git/HEAD": "nested", "old/credentials.json": "{}",
	})
	gittest.Git(t, dir, "rm", "-q", "--cached", "old/credentials.json") // still in HEAD
	gittest.Git(t, dir, "config", "filter.evil.clean", prog)
	gittest.Git(t, dir, "config", "diff.evil.textconv", prog)
	gittest.Git(t, dir, "config", "core.sshCommand", prog)
	gittest.Git(t, dir, "config", "core.fsmonitor", prog)
	gittest.Git(t, dir, "config", "include.path", "/tmp/nowhere.cfg")
	gittest.Git(t, dir, "config", "core.editor", "vim")
	gittest.Write(t, dir, map[string]string{".gitmodules": "[submodule \"s\"]\n\tpath = s\n\turl = https://github.com/a/b\n", ".GIT/x": "x", "bad\x01name": "x"})
	for _, l := range [][2]string{{outside, "out-link"}, {".env", "env-link"}, {".git", "git-link"}, {"loop2", "loop1"}, {"loop1", "loop2"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "a.txt"), filepath.Join(dir, "a-link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, dir, map[string]string{"a.txt": "b\n"}) // a status would run the clean filter
	r := run(t, dir)
	if r.Audited != Checkout || r.Name != "repo" {
		t.Fatalf("audited %s %q", r.Audited, r.Name)
	}
	got := rules(r)
	for rule, want := range map[string]string{
		"config-read-refused":   ".git/config",
		"config-include":        ".git/config",
		"config-change-refused": ".git/config,.git/config,.git/config,.git/config", // fsmonitor, editor, filter, textconv
		"submodules":            ".gitmodules",
		"secret-tracked":        ".env,deploy/id_rsa,old/credentials.json",
		"attributes-driver":     ".gitattributes,.gitattributes",
		"hard-link":             "a-link.txt,a.txt",
		"special-file":          "pipe",
		"symlink-outside":       "out-link",
		"symlink-secret":        "env-link,out-link", // out-link leads outside, to a secret: both
		"symlink-git":           "git-link",
		"symlink-loop":          "loop1,loop2",
		"git-lookalike":         ".GIT",
		"nested-git":            "sub/.git",
		"control-char":          "bad\x01name",
		"leading-dash":          "-rf",
	} {
		if strings.Join(got[rule], ",") != want {
			t.Errorf("%s: %q, want %q", rule, got[rule], want)
		}
	}
	for _, f := range r.Findings {
		if f.Rule == "config-read-refused" && !strings.Contains(f.Message, "turn on Full access for remote devices") {
			t.Errorf("no gate sentence: %s", f.Message)
		}
		if f.Rule == "secret-tracked" && f.Path == "old/credentials.json" && !strings.Contains(f.Message, "still committed in HEAD") {
			t.Errorf("a HEAD-only secret: %s", f.Message)
		}
	}
	if gittest.Fired(marker) {
		t.Fatal("auditing ran a program the repository names")
	}
	// Without the gate's options the same checkout runs the payload: plain
	// git status starts the fsmonitor and the clean filter.
	gittest.Git(t, dir, "!", "status")
	if !gittest.Fired(marker) {
		t.Fatal("plain git status did not run the payload; the check above proves nothing")
	}
	if !r.Fails(Error) || !r.Fails(Warning) {
		t.Fatal("errors do not fail the audit")
	}
}

func TestOtherFindingKinds(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	gittest.Git(t, dir, "config", "extensions.partialClone", "origin")
	gittest.Git(t, dir, "config", "core.worktree", "/tmp")
	got := rules(run(t, dir))
	if len(got["partial-clone"]) != 1 || len(got["core-worktree"]) != 1 {
		t.Fatalf("%v", got)
	}
	big := gittest.Init(t, nil)
	cfg := filepath.Join(big, ".git", "config")
	data, _ := os.ReadFile(cfg)
	data = append(data, []byte(strings.Repeat("[user]\n\tname = "+strings.Repeat("x", 1000)+"\n", 1100))...)
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := rules(run(t, big)); len(got["config-too-large"]) != 1 {
		t.Fatalf("%v", got)
	}
	other := gittest.Init(t, nil)
	link := t.TempDir()
	if err := os.Symlink(filepath.Join(other, ".git"), filepath.Join(link, ".git")); err != nil {
		t.Fatal(err)
	}
	if got := rules(run(t, link)); len(got["git-dir-redirected"]) != 1 {
		t.Fatalf("a symlinked .git: %v", got)
	}
	shaped := gittest.Init(t, nil)
	os.Remove(filepath.Join(shaped, ".git", "logs", "HEAD"))
	if err := os.Symlink("/etc/passwd", filepath.Join(shaped, ".git", "logs", "HEAD")); err != nil {
		t.Fatal(err)
	}
	shapeRep := run(t, shaped)
	if r := rules(shapeRep); len(r["git-dir-shape"]) != 1 {
		t.Fatalf("a symlink in .git: %v", r)
	}
	for _, f := range shapeRep.Findings {
		if f.Rule == "git-dir-shape" && !strings.Contains(f.Message, ".git/logs/HEAD") {
			t.Fatalf("the finding does not name the entry: %q", f.Message)
		}
	}
	clean := run(t, gittest.Init(t, map[string]string{"main.go": "package main\n", ".env.example": "A=\n"}))
	if len(clean.Findings) != 0 || clean.Fails(Warning) {
		t.Fatalf("a clean checkout: %+v", clean.Findings)
	}
}

func TestBareAndPlainFolders(t *testing.T) {
	gittest.Home(t, "")
	src := gittest.Init(t, map[string]string{".npmrc": "token\n", "a.txt": "a\n"})
	bare := filepath.Join(t.TempDir(), "repo.git")
	gittest.Git(t, "", "clone", "-q", "--bare", src, bare)
	gittest.Git(t, bare, "config", "core.editor", "vim")
	gittest.Git(t, bare, "config", "remote.origin.url", "https://example.com/a.git") // not the local path clone left
	r := run(t, bare)
	got := rules(r)
	if r.Audited != Bare || strings.Join(got["secret-tracked"], ",") != ".npmrc" || len(got["config-change-refused"]) != 1 {
		t.Fatalf("bare: %s %v", r.Audited, got)
	}
	if m := r.Findings[0].Message; !strings.HasPrefix(m, "is committed in HEAD") {
		t.Fatalf("a bare repository's secret: %s", m)
	}
	folder := t.TempDir()
	gittest.Write(t, folder, map[string]string{".aws/credentials": "x", "notes.md": "x"})
	r = run(t, folder)
	got = rules(r)
	if r.Audited != Folder || strings.Join(got["secret-file"], ",") != ".aws/credentials" {
		t.Fatalf("folder: %s %v", r.Audited, got)
	}
}

// The SARIF output validates against the SARIF 2.1.0 schema.
func TestSARIFValidatesAgainstTheSchema(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{".gitattributes": "*.txt filter=f\n", "a b/é/.env": "x", "site.pem": certPEM,
		".gitmodules": "[submodule \"s\"]\n\tpath = s\n\turl = https://example.com/s\n"})
	gittest.Git(t, dir, "config", "filter.f.clean", "cat")
	gittest.Git(t, dir, "config", "remote.origin.url", "https://u:p@example.com/a.git")
	r := run(t, dir)
	out, err := SARIF(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	schemaFile, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer schemaFile.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("sarif.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("the SARIF does not validate: %v", err)
	}
	// And a broken document does not: the check has teeth.
	var broken map[string]any
	_ = json.Unmarshal(out, &broken)
	broken["version"] = "2.0.0"
	if schema.Validate(broken) == nil {
		t.Fatal("a SARIF with the wrong version validated")
	}
	if !strings.Contains(string(out), `"uri": "a%20b/%C3%A9/.env"`) || !strings.Contains(string(out), `"startLine": 1`) {
		t.Fatalf("a location is missing or not a URI:\n%s", out)
	}
}

func TestBaselineRoundTrip(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{".env": "x"})
	base := filepath.Join(t.TempDir(), "baseline.json")
	r := run(t, dir)
	if err := WriteBaseline(base, r); err != nil {
		t.Fatal(err)
	}
	r = run(t, dir)
	if err := ApplyBaseline(base, r); err != nil || len(r.Findings) != 0 || r.Baselined != 1 || r.Fails(Warning) {
		t.Fatalf("after the baseline: %+v %v", r, err)
	}
	gittest.Write(t, dir, map[string]string{".npmrc": "token"})
	gittest.Git(t, dir, "add", ".npmrc")
	r = run(t, dir)
	if err := ApplyBaseline(base, r); err != nil || len(r.Findings) != 1 || r.Findings[0].Path != ".npmrc" {
		t.Fatalf("a new finding: %+v", r.Findings)
	}
	if err := os.WriteFile(base, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ApplyBaseline(base, run(t, dir)); err == nil {
		t.Fatal("a broken baseline was accepted")
	}
}

// Every rule the audit can report has a place in Rules (its level, its
// group, its SARIF description), and every hazard kind a sentence.
func TestEveryRuleIsDescribed(t *testing.T) {
	kinds := []fsguard.HazardKind{fsguard.HazardHardLink, fsguard.HazardSpecial, fsguard.HazardSymlinkOutside,
		fsguard.HazardSymlinkSecret, fsguard.HazardSymlinkGit, fsguard.HazardSymlinkLoop, fsguard.HazardGitLookalike,
		fsguard.HazardNestedGit, fsguard.HazardControlChar, fsguard.HazardLeadingDash}
	ids := []string{"config-read-refused", "config-change-refused", "config-include", "config-too-large", "partial-clone",
		"core-worktree", "submodules", "git-dir-redirected", "git-dir-shape", "secret-tracked", "secret-file", "attributes-driver",
		"attributes-user-driver", "attributes-undefined-driver", "secret-name-public-content", "config-credential"}
	for _, k := range kinds {
		ids = append(ids, string(k))
		if hazardSentences[k] == "" {
			t.Errorf("hazard %s has no sentence", k)
		}
	}
	for _, id := range ids {
		i, ok := ruleIndex[id]
		if !ok {
			t.Errorf("rule %s is not in Rules", id)
			continue
		}
		if r := Rules[i]; r.Group == "" || r.Level == "" || r.Short == "" || r.Help == "" {
			t.Errorf("rule %s is not fully described: %+v", id, r)
		}
	}
	if len(ids) != len(Rules) {
		t.Errorf("Rules has %d entries, the audit reports %d rules", len(Rules), len(ids))
	}
}

var update = flag.Bool("update", false, "rewrite docs/audit.md's rule table")

// docs/audit.md lists every rule as audit.Rules describes it.
func TestDocListsEveryRule(t *testing.T) {
	const doc = "../docs/audit.md"
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	table.WriteString("<!-- rules -->\n| rule | group | level | what it means |\n|---|---|---|---|\n")
	for _, r := range Rules {
		fmt.Fprintf(&table, "| `%s` | %s | %s | %s. %s |\n", r.ID, r.Group, r.Level, r.Short, r.Help)
	}
	table.WriteString("<!-- /rules -->")
	start, end := strings.Index(string(data), "<!-- rules -->"), strings.Index(string(data), "<!-- /rules -->")
	if start < 0 || end < start {
		t.Fatalf("%s has no <!-- rules --> section", doc)
	}
	want := string(data[:start]) + table.String() + string(data[end+len("<!-- /rules -->"):])
	if *update {
		if err := os.WriteFile(doc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != string(data) {
		t.Errorf("%s's rule table differs from audit.Rules; run go test ./audit/ -run TestDocListsEveryRule -update", doc)
	}
}
