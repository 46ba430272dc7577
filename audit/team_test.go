package audit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

const (
	certPEM    = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUW\n-----END CERTIFICATE-----\n"
	privatePEM = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----\n"
)

func byPath(r *Report) map[string]Finding {
	out := map[string]Finding{}
	for _, f := range r.Findings {
		out[f.Path] = f
	}
	return out
}

// An ambiguous secret name is judged by the blob git holds: a certificate
// or a public key is a note, a private key stays an error and says so, and
// a name that is not ambiguous (.env) is never judged by content.
func TestPublicContentIsANote(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{
		"certs/site.pem":           certPEM,
		"certs/chain.key":          certPEM + certPEM,
		"keys/signing.pem":         "-----BEGIN ROOT PUBLIC KEY-----\nPsrabv2YNiEDhPlnLVSMtB5EKACm7zxvKxfvYD4i7X8=\n-----END ROOT PUBLIC KEY-----\n",
		"deploy/id_ed25519":        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE deploy@ci\n",
		"certs/server.key":         privatePEM,
		"certs/both.pem":           certPEM + privatePEM,
		"deploy/id_rsa":            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
		"keys/work.ppk":            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\nAAAA\nPrivate-Lines: 1\nAAAA\n",
		"gcp/service-account.json": `{"type": "service_account", "project_id": "p", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n", "client_email": "a@p.iam.gserviceaccount.com"}`,
		"k8s/service-account.json": `{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder"}}`,
		".env":                     "DEPLOY_KEY=ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE\nPASSWORD=hunter2\n",
		"big/huge.pem":             certPEM + strings.Repeat("# padding\n", 8000) + privatePEM,
		"odd/unknown.pem":          "-----BEGIN SOMETHING ELSE-----\nAAAA\n-----END SOMETHING ELSE-----\n",
		"staged/changed.pem":       privatePEM,
	})
	// The work tree says certificate, the index says private key: the
	// index is what a clone gets.
	gittest.Write(t, dir, map[string]string{"staged/changed.pem": certPEM})
	r := run(t, dir)
	got := byPath(r)
	for path, want := range map[string]string{
		"certs/site.pem": "secret-name-public-content", "certs/chain.key": "secret-name-public-content",
		"keys/signing.pem": "secret-name-public-content", "deploy/id_ed25519": "secret-name-public-content",
		"k8s/service-account.json": "secret-name-public-content",
		"certs/server.key":         "secret-tracked", "certs/both.pem": "secret-tracked", "deploy/id_rsa": "secret-tracked",
		"keys/work.ppk": "secret-tracked", "gcp/service-account.json": "secret-tracked", ".env": "secret-tracked",
		"big/huge.pem": "secret-tracked", "odd/unknown.pem": "secret-tracked", "staged/changed.pem": "secret-tracked",
	} {
		f, ok := got[path]
		if !ok {
			t.Errorf("%s: no finding", path)
			continue
		}
		if f.Rule != want {
			t.Errorf("%s: %s (%s), want %s", path, f.Rule, f.Message, want)
		}
		if want == "secret-name-public-content" && f.Level != Note {
			t.Errorf("%s: level %s", path, f.Level)
		}
	}
	for path, says := range map[string]string{
		"certs/server.key":         "a private key (-----BEGIN PRIVATE KEY-----)",
		"deploy/id_rsa":            "OPENSSH PRIVATE KEY",
		"keys/work.ppk":            "a PuTTY private key",
		"gcp/service-account.json": "a Google service-account key",
		"certs/site.pem":           "holds a certificate in it, no private key",
		"deploy/id_ed25519":        "an SSH public key",
	} {
		if !strings.Contains(got[path].Message, says) {
			t.Errorf("%s: %q does not say %q", path, got[path].Message, says)
		}
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Message, "MIGHAgEA") || strings.Contains(f.Message, "hunter2") {
			t.Errorf("a finding quotes the secret: %s", f.Message)
		}
	}
	if r.Fails(Error) != true {
		t.Fatal("private keys do not fail the audit")
	}
	// Public material alone fails nothing.
	pub := run(t, gittest.Init(t, map[string]string{"certs/site.pem": certPEM, "README.md": "x"}))
	if pub.Fails(Warning) || len(pub.Findings) != 1 {
		t.Fatalf("a certificate alone: %+v", pub.Findings)
	}
}

// The judge alone, on what the blob says.
func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name, data string
		truncated  bool
		want       content
	}{
		{"a.pem", certPEM, false, contentPublic},
		{"a.pem", certPEM, true, contentUnknown}, // the rest of a long file may hold a key
		{"a.pem", privatePEM, true, contentPrivate},
		{"a.pem", "-----BEGIN EC PRIVATE KEY-----\n", false, contentPrivate},
		{"a.pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n", false, contentPrivate},
		{"a.asc", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n", false, contentPrivate},
		{"a.asc", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n", false, contentPublic},
		{"a.pem", "-----BEGIN RSA PUBLIC KEY-----\n", false, contentPublic},
		{"a.pem", "", false, contentUnknown},
		{"a.pem", "just text\n", false, contentUnknown},
		{"a.json", `{"type": "service_account", "private_key": ""}`, false, contentPublic},
		{"a.json", `{"type": "service_account", "private_key_id": "abc"}`, false, contentUnknown},
		{"a.json", `{"type": "authorized_user", "refresh_token": "1//x"}`, false, contentUnknown},
		{"a.json", `not json`, false, contentUnknown},
	} {
		if got, _ := judge(c.name, []byte(c.data), c.truncated); got != c.want {
			t.Errorf("%s %q (truncated %v): %d, want %d", c.name, c.data, c.truncated, got, c.want)
		}
	}
}

// Each config finding's sentence is true; a token stored in .git/config is
// a finding of its own, masked everywhere the audit writes.
func TestConfigSentencesAndStoredCredentials(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, dir, "config", "remote.origin.url", "/srv/git/project.git")
	gittest.Git(t, dir, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0dG9rZW4=")
	gittest.Git(t, dir, "config", "remote.up.url", "https://deploy:hunter2@example.com/a.git")
	gittest.Git(t, dir, "config", "url.https://bot:hunter2@example.com/.insteadOf", "https://example.com/")
	gittest.Write(t, dir, map[string]string{".gitmodules": "# modules\n[submodule \"lib\"]\n\tpath = lib\n\turl = https://example.com/lib.git\n"})
	// The secrets are there: plain git prints them.
	if out := gittest.Git(t, dir, "config", "--list"); !strings.Contains(out, "c2VjcmV0dG9rZW4=") || !strings.Contains(out, "hunter2") {
		t.Fatalf("the fixture holds no secret:\n%s", out)
	}
	r := run(t, dir)
	out, _ := json.Marshal(r)
	sarif, _ := SARIF(r, "test")
	for _, doc := range []string{string(out), string(sarif)} {
		if strings.Contains(doc, "c2VjcmV0dG9rZW4=") || strings.Contains(doc, "hunter2") {
			t.Fatalf("the audit prints a stored secret:\n%s", doc)
		}
	}
	var creds, remote, subs []Finding
	for _, f := range r.Findings {
		switch {
		case f.Rule == "config-credential":
			creds = append(creds, f)
		case f.Rule == "config-change-refused" && strings.HasPrefix(f.Message, "remote.origin.url:"):
			remote = append(remote, f)
		case f.Rule == "submodules":
			subs = append(subs, f)
		}
	}
	if len(creds) != 3 || creds[0].Level != Error {
		t.Fatalf("stored credentials: %+v", creds)
	}
	msgs := creds[0].Message + "\n" + creds[1].Message + "\n" + creds[2].Message
	if !strings.Contains(msgs, "AUTHORIZATION: basic ****") || !strings.Contains(msgs, "https://deploy:****@example.com/a.git") ||
		!strings.Contains(msgs, "url.https://bot:****@example.com/.insteadof names a URL with a password") {
		t.Errorf("the credentials are not shown masked: %s", msgs)
	}
	for _, f := range creds {
		if f.Path != ".git/config" || f.Line == 0 {
			t.Errorf("a credential without its line: %+v", f)
		}
	}
	if len(remote) != 1 || !strings.Contains(remote[0].Message, "reaches files outside the checkout") || strings.Contains(remote[0].Message, "runs programs") {
		t.Fatalf("a local-path remote: %+v", remote)
	}
	if remote[0].Line == 0 {
		t.Errorf("the remote's line: %+v", remote[0])
	}
	if len(subs) != 1 || subs[0].Line != 2 || !strings.HasPrefix(subs[0].Message, "declares submodules") || strings.Contains(subs[0].Message, "runs programs") {
		t.Fatalf("submodules: %+v", subs)
	}
}

// configLine places keys as git lists them.
func TestConfigLine(t *testing.T) {
	cfg := []byte("[core]\n\tbare = false\n[remote \"Origin\"]\n\turl = /x\n[http \"https://a:b@h/\"]\n\textraHeader = x\n[Alias] co = checkout\n")
	for key, want := range map[string]int{"core.bare": 2, "remote.Origin.url": 4, "http.https://a:b@h/.extraheader": 6, "alias.co": 7, "remote.origin.url": 0, "core.editor": 0} {
		if got := configLine(cfg, key); got != want {
			t.Errorf("%s: line %d, want %d", key, got, want)
		}
	}
	if got := configLineMasked(cfg, "http.https://a:****@h/.extraheader"); got != 6 {
		t.Errorf("a masked key: line %d", got)
	}
}

// The checked-in config allows findings by path and rule, each with a
// reason, and refuses an entry without one.
func TestAllowlistConfig(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"testdata/keys/a.key": privatePEM, "deploy/id_rsa": privatePEM, "-x": "x"})
	cfg, err := ParseConfig([]byte(`{"version": 1, "allow": [
		{"path": "testdata/**", "rule": "secret-tracked", "reason": "keys made for the tests, used nowhere"},
		{"rule": "leading-dash", "reason": "a fixture for option parsing"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, dir)
	cfg.Apply(r)
	if got := rules(r); strings.Join(got["secret-tracked"], ",") != "deploy/id_rsa" || len(got["leading-dash"]) != 0 {
		t.Fatalf("after the config: %v", got)
	}
	if len(r.Allowed) != 2 || r.Allowed[0].Reason == "" || r.Allowed[0].Fingerprint == "" {
		t.Fatalf("allowed: %+v", r.Allowed)
	}
	for _, bad := range []struct{ doc, says string }{
		{`{"version": 1, "allow": [{"path": "testdata/**"}]}`, `has no "reason"`},
		{`{"version": 1, "allow": [{"path": "testdata/**", "reason": "  "}]}`, `has no "reason"`},
		{`{"version": 1, "allow": [{"path": "x", "reson": "typo"}]}`, `unknown field "reson"`},
		{`{"version": 1, "allow": [{"rule": "no-such-rule", "reason": "x"}]}`, `no rule "no-such-rule"`},
		{`{"version": 1, "allow": [{"reason": "everything"}]}`, "names neither"},
		{`{"version": 1, "allow": [{"path": "[", "reason": "x"}]}`, "bad glob"},
		{`{"allow": []}`, "want {"},
		{`[]`, ErrConfig.Error()},
	} {
		if _, err := ParseConfig([]byte(bad.doc)); err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s: %v, want %q", bad.doc, err, bad.says)
		}
	}
	for _, c := range []struct {
		glob, path string
		want       bool
	}{{"*.pem", "a/b/c.pem", true}, {"*.pem", "c.pem", true}, {"certs/*.pem", "certs/a.pem", true}, {"certs/*.pem", "x/certs/a.pem", false},
		{"**/certs/*.pem", "x/certs/a.pem", true}, {"testdata/**", "testdata/a/b", true}, {"testdata/**", "src/testdata/a", false},
		{"a/**/b", "a/b", true}, {"a/**/b", "a/x/y/b", true}, {"*.PEM", "a.pem", false}} {
		if got := globMatch(c.glob, c.path); got != c.want {
			t.Errorf("%s ~ %s: %v", c.glob, c.path, got)
		}
	}
	// A config that is a link or a FIFO is refused, not followed.
	link := filepath.Join(t.TempDir(), ConfigName)
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(link); !errors.Is(err, ErrConfig) {
		t.Fatalf("a linked config: %v", err)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing config: %v", err)
	}
}

// The baseline lists path, rule, fingerprint and reason per entry, keeps
// reasons a team wrote, still reads version 1, and a missing one is
// ErrNoBaseline.
func TestBaselineIsReadable(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{".env": "x"})
	base := filepath.Join(t.TempDir(), "baseline.json")
	r := run(t, dir)
	fp := r.Findings[0].Fingerprint
	if err := WriteBaseline(base, r); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(base)
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil || b.Version != 2 || len(b.Findings) != 1 {
		t.Fatalf("%s %v", data, err)
	}
	if e := b.Findings[0]; e.Path != ".env" || e.Rule != "secret-tracked" || e.Fingerprint != fp || e.Reason == "" {
		t.Fatalf("an entry: %+v", e)
	}
	// A reason a person wrote survives a rewrite.
	edited := strings.Replace(string(data), writtenReason, "a dummy for the docs", 1)
	if err := os.WriteFile(base, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteBaseline(base, run(t, dir)); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(base); !strings.Contains(string(data), "a dummy for the docs") {
		t.Fatalf("the reason was lost:\n%s", data)
	}
	// Version 1 still works.
	v1 := filepath.Join(t.TempDir(), "v1.json")
	if err := os.WriteFile(v1, []byte(`{"version": 1, "fingerprints": ["`+fp+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, dir)
	if err := ApplyBaseline(v1, r); err != nil || r.Baselined != 1 || len(r.Findings) != 0 {
		t.Fatalf("a version 1 baseline: %v %+v", err, r)
	}
	r = run(t, dir)
	if err := ApplyBaseline(filepath.Join(t.TempDir(), "missing.json"), r); !errors.Is(err, ErrNoBaseline) || len(r.Findings) != 1 {
		t.Fatalf("a missing baseline: %v", err)
	}
}

// A SARIF result's message says what it is about.
func TestSARIFMessagesNameTheirSubject(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"certs/server.key": privatePEM})
	gittest.Git(t, dir, "config", "core.editor", "vim")
	r, err := Run(context.Background(), dir, Options{Home: "/nonexistent-home"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := SARIF(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Results []struct {
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	var texts []string
	lines := 0
	for _, res := range doc.Runs[0].Results {
		texts = append(texts, res.Message.Text)
		if l := res.Locations[0].PhysicalLocation.Region; l != nil && l.StartLine > 0 {
			lines++
		}
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "`certs/server.key` is tracked and matches the secret rule") || !strings.Contains(all, "`.git/config` line ") {
		t.Fatalf("messages:\n%s", all)
	}
	if lines != 1 {
		t.Fatalf("%d results carry a line, want the config key's", lines)
	}
}
