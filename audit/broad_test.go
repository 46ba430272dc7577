package audit

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/secretfiles"
)

const (
	oid1 = "a122b33c6bad3ee54724f52f2caad385ab1982ab"
	oid0 = "0000000000000000000000000000000000000000"
	// reflogGitleaks is the shape of gitleaks' tracked
	// testdata/repos/small/dotGit/logs/refs/heads/remove-secrets.
	reflogGitleaks = oid0 + " 1b6da43b82b22e4eaa10bcf8ee591e91abbfc587 A U Thor <author@example.com> 1635896362 -0500\tbranch: Created from HEAD\n" +
		"1b6da43b82b22e4eaa10bcf8ee591e91abbfc587 " + oid1 + " A U Thor <author@example.com> 1635896518 -0500\tcommit: load token via env var\n"
)

// broadRepo tracks a test repository's git folder as plain files (as
// gitleaks does, under dotGit/), next to files a broad rule matches that
// may hold a secret.
var broadRepo = map[string]string{
	// What git writes: a note.
	"testdata/repo/refs/heads/remove-secrets":      oid1 + "\n",
	"testdata/repo/logs/refs/heads/remove-secrets": reflogGitleaks,
	"testdata/repo/refs/heads/reset-password":      "ref: refs/heads/main\n",
	"secrets.txt": "",
	// May hold a secret: still an error.
	"config/secrets.yml": "api_key: abcd1234abcd1234abcd1234abcd1234\n",
	// Forty hex digits outside refs/: the shape of a GitHub token from
	// before 2021.
	"keys/deploy_api_key": oid1 + "\n",
	// git would read this as a ref (anything may follow the id after a
	// space); the audit takes only what git writes.
	"testdata/repo/refs/heads/fix-secrets": oid1 + " ghp_notarealtoken0000000000000000000000\n",
	// A reflog that names a URL: a clone message carries the URL it was
	// given.
	"testdata/repo/logs/refs/heads/old-secrets": oid0 + " " + oid1 + " A U Thor <author@example.com> 1635896362 -0500\tclone: from https://user:hunter2@example.com/r.git\n",
	// Plain words: a recovery code or a seed phrase is plain words too.
	"notes/recovery-codes": "correct horse battery staple\n",
	// Not a broad rule: an empty .env stays an error.
	".env": "",
}

// A file a broad rule (*secrets*) matches was an error whatever it held;
// now the audit reads it, and one that is empty or holds exactly what git
// writes in a ref or reflog, where git keeps those, is a note. Anything
// else a broad rule matches stays an error.
func TestBroadNameIsJudgedByContent(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, broadRepo)

	old, err := Run(context.Background(), dir, Options{Home: "/nonexistent-home", broadOffForTest: true})
	if err != nil {
		t.Fatal(err)
	}
	before := byPath(old)
	for name := range broadRepo {
		if f := before[name]; f.Rule != "secret-tracked" || f.Level != Error {
			t.Errorf("without the content judgement, %s: %s %s (%s), want an error secret-tracked", name, f.Level, f.Rule, f.Message)
		}
	}

	after := byPath(run(t, dir))
	notes := map[string]string{
		"testdata/repo/refs/heads/remove-secrets":      "a git ref (one object id",
		"testdata/repo/logs/refs/heads/remove-secrets": "a git reflog",
		"testdata/repo/refs/heads/reset-password":      "a git symbolic ref",
		"secrets.txt": "an empty file",
	}
	for name := range broadRepo {
		f := after[name]
		says, note := notes[name]
		switch {
		case note && (f.Rule != "secret-name-public-content" || f.Level != Note):
			t.Errorf("%s: %s %s (%s), want a note secret-name-public-content", name, f.Level, f.Rule, f.Message)
		case note && !strings.Contains(f.Message, says):
			t.Errorf("%s: %q does not say %q", name, f.Message, says)
		case !note && (f.Rule != "secret-tracked" || f.Level != Error):
			t.Errorf("%s: %s %s (%s), want an error secret-tracked", name, f.Level, f.Rule, f.Message)
		}
		if strings.Contains(f.Message, "hunter2") || strings.Contains(f.Message, "ghp_") || strings.Contains(f.Message, oid1) {
			t.Errorf("%s: the finding quotes the file's content: %s", name, f.Message)
		}
	}
}

// The content rule, one case at a time.
func TestJudgeBroad(t *testing.T) {
	sha256 := strings.Repeat("0123456789abcdef", 4)
	for _, c := range []struct {
		name, data string
		truncated  bool
		inert      bool
	}{
		{"secrets.txt", "", false, true},
		{"secrets.txt", " \n\t\n", false, true},
		{"secrets.txt", "", true, false}, // cut short: there was more
		{"r/refs/heads/x-secrets", oid1 + "\n", false, true},
		{"r/refs/heads/x-secrets", oid1, false, true},
		{"r/refs/heads/x-secrets", sha256 + "\n", false, true},
		{"r/refs/tags/v1/x-secrets", oid1 + "\n", false, true},
		{"r/refs/heads/x-secrets", strings.ToUpper(oid1) + "\n", false, false}, // git writes lower case
		{"r/refs/heads/x-secrets", oid1 + "\r\n", false, false},
		{"r/refs/heads/x-secrets", oid1 + "\n" + oid1 + "\n", false, false},
		{"r/refs/heads/x-secrets", oid1[:39] + "\n", false, false},
		{"r/refs/heads/x-secrets", "ref: refs/heads/main\n", false, true},
		{"r/refs/heads/x-secrets", "ref: refs/heads/a b\n", false, false},
		{"r/refs/heads/x-secrets", "ref: /etc/passwd\n", false, false},
		{"r/refs/heads/x-secrets", reflogGitleaks, false, false}, // a reflog is not a ref
		{"r/logs/refs/heads/x-secrets", reflogGitleaks, false, true},
		{"r/logs/refs/heads/x-secrets", strings.TrimSuffix(reflogGitleaks, "\n"), false, false},
		{"r/logs/refs/heads/x-secrets", oid0 + " " + oid1 + " A <a@b> 1 +0000\n", false, true}, // no message
		{"r/logs/refs/heads/x-secrets", oid0 + " " + sha256 + " A <a@b> 1 +0000\tm\n", false, false},
		{"r/logs/refs/heads/x-secrets", oid0 + " " + oid1 + " A <a@b> 1 0000\tm\n", false, false},
		{"r/logs/refs/heads/x-secrets", oid0 + " " + oid1 + " a@b 1 +0000\tm\n", false, false},
		{"r/logs/refs/heads/x-secrets", oid0 + " " + oid1 + " A <a@b> 1 +0000\tpull: https://h/r\n", false, false},
		{"r/logs/refs/heads/x-secrets", reflogGitleaks + "password=hunter2\n", false, false},
		{"keys/api_key", oid1 + "\n", false, false},  // not where git keeps refs
		{"refs/x-secrets", oid1 + "\n", false, true}, // as refs/stash
		{"r/prefs/x-secrets", oid1 + "\n", false, false},
		{"r/refs", oid1 + "\n", false, false},
		{"notes/recovery-codes", "correct horse battery staple\n", false, false},
	} {
		kind, what := judgeBroad(c.name, []byte(c.data), c.truncated)
		if got := kind == contentInert; got != c.inert || (kind != contentInert && kind != contentUnknown) {
			t.Errorf("judgeBroad(%q, %q, %v) = %v %q, want inert %v", c.name, c.data, c.truncated, kind, what, c.inert)
		}
	}
}

// Broad is data on the rule: every rule that matches a word anywhere in a
// name (*secrets*) carries it, and only word rules do (no extension, no
// folder: *.pem or .ssh/** name what a tool writes, and keep their own
// content rules).
func TestBroadRulesAreWordRules(t *testing.T) {
	n := 0
	for _, r := range secretfiles.Table {
		last := path.Base(r.Pattern)
		word := strings.HasPrefix(last, "*") && !strings.ContainsAny(last, ".[/") && !strings.HasSuffix(r.Pattern, "/**")
		anywhere := word && strings.HasSuffix(last, "*")
		if r.Broad && !word {
			t.Errorf("%s is marked Broad but is not a word rule", r.Pattern)
		}
		if anywhere && !r.Broad {
			t.Errorf("%s matches a word anywhere in a name but is not marked Broad", r.Pattern)
		}
		if r.Broad {
			n++
		}
	}
	if n == 0 {
		t.Error("no rule is marked Broad")
	}
}

// Broad changes only the audit's level: the secret decision a phone meets
// is the same with the field cleared on every rule.
func TestBroadNeverChangesTheDecision(t *testing.T) {
	cleared := append([]secretfiles.Rule(nil), secretfiles.Table...)
	for i := range cleared {
		cleared[i].Broad = false
	}
	m, err := secretfiles.Compile(cleared)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"a/b/c.txt", "README.md", "config/secrets.go", "x/.env.example"}
	for name := range broadRepo {
		names = append(names, name)
	}
	for _, name := range names {
		r1, ok1 := secretfiles.Default().Match(name)
		r2, ok2 := m.Match(name)
		if ok1 != ok2 || r1.Pattern != r2.Pattern || r1.Reason != r2.Reason {
			t.Errorf("%s: %v %s with Broad, %v %s without", name, ok1, r1.Pattern, ok2, r2.Pattern)
		}
	}
}
