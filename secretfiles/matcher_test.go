package secretfiles

import (
	"flag"
	"strings"
	"sync"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// naiveMatch is the reference for the rules: every rule's pattern through
// doublestar, one at a time, in table order, with the rule's exceptions the
// same way. It knows no decorations: "the rule alone matches" means the
// pattern.
func naiveMatch(rules []Rule, unsafePath string) (Rule, bool) {
	v := naiveFor(rules).plain(unsafePath, false)
	return v.rule, v.ok
}

// naiveDecorated is the reference for Match: naiveMatch with the same
// decoration grammar over it (the grammar is its own table, tested on its
// own in decorations_test.go; the index is what the comparison checks).
func naiveDecorated(rules []Rule, unsafePath string) (Rule, bool) {
	n := naiveFor(rules)
	v := n.plain(unsafePath, true)
	if !v.hint {
		return v.rule, v.ok
	}
	r, ok, _ := defaultGrammar().judge(n.dirs, unsafePath, v, n.plain)
	return r, ok
}

type naiveMatcher struct {
	rules []Rule
	dirs  *dirSet
}

var naiveCache sync.Map // first rule's address and length -> *naiveMatcher

func naiveFor(rules []Rule) *naiveMatcher {
	type key struct {
		first *Rule
		n     int
	}
	k := key{n: len(rules)}
	if len(rules) > 0 {
		k.first = &rules[0]
	}
	if n, ok := naiveCache.Load(k); ok {
		return n.(*naiveMatcher)
	}
	pats := make([]string, len(rules))
	for i, r := range rules {
		pats[i] = r.Pattern
	}
	n := &naiveMatcher{rules: rules, dirs: newDirSet(pats)}
	naiveCache.Store(k, n)
	return n
}

func (n *naiveMatcher) plain(unsafePath string, wantHint bool) verdict {
	p := normalize(unsafePath)
	var v verdict
	if wantHint {
		w := defaultGrammar().work()
		v.hint = defaultGrammar().hint(n.dirs, p, p[strings.LastIndexByte(p, '/')+1:], &w)
		v.steps, v.costly = w.steps, w.spent()
	}
	for _, r := range n.rules {
		if ok, _ := doublestar.Match(r.Pattern, p); !ok {
			continue
		}
		excepted := false
		for _, ex := range r.Except {
			if ok, _ := doublestar.Match(ex, p); ok {
				excepted = true
				break
			}
		}
		if excepted {
			v.freed = true
			continue
		}
		v.rule, v.ok = r, true
		return v
	}
	return v
}

// Every name a version of the table has made secret, in the order they came,
// grouped by what they hold: every one must stay secret. Each rule's Source
// in rules.go names the tool that writes the file; docs/secret-rules.md says
// where the rules come from.
var seedFloor = []string{
	// The first table: env files, keys and certificates, package managers'
	// tokens, Kubernetes' and Docker's logins
	".env", ".env.local", "app/.env.production", "server.pem", "tls.key", "id_rsa",
	"id_rsa_work", "id_ed25519", ".npmrc", ".netrc", ".pypirc", "credentials.json",
	"credentials-prod.json", "cert.p12", "release.keystore", ".kube/config",
	"home/.docker/config.json",
	// More SSH key types and SSH's own files, key stores, Terraform state,
	// Yarn's and the GitHub CLI's tokens
	"id_ecdsa", "id_dsa", "store.pfx", "terraform.tfstate", "terraform.tfstate.backup",
	".yarnrc.yml", ".ssh/config", ".ssh/authorized_keys", "x/.ssh/known_hosts", ".config/gh/hosts.yml",
	// Google Cloud's service accounts and default credentials, AWS's config
	"application_default_credentials.json", "deploy-credentials.json", "service-account-prod.json",
	"service_account.json", ".aws/config",
	// GnuPG's keyring, Vault's token, s3cmd's and boto's configs, Composer's
	// auth.json, OpenVPN profiles
	".gnupg/pubring.kbx", ".vault-token", ".s3cfg", ".boto", "auth.json", "office.ovpn",
	// AI agents' MCP servers and settings, secrets files by name
	".mcp.json", ".claude/settings.local.json", "secrets.json", "secrets.yaml", "config/secrets.toml",
	// Env files named by environment, Firebase's and other service account keys
	"prod.env", "serviceAccountKey.json", "firebase-adminsdk-abc12.json", "my-service-account-key.json",
	// 1Password Connect, credentials files, Apple's and PuTTY's keys, GnuPG
	// backups, Terraform's CLI config
	"connect-secrets.json", "connect-grants.json", ".credentials.json", "credentials.toml",
	"AuthKey_ABC.p8", "putty.ppk", "backup.gpg", ".terraformrc",
	// Editors' and agents' MCP and config files, shell and REPL histories
	".cursor/mcp.json", ".vscode/mcp.json", ".roo/mcp.json", ".gemini/settings.json",
	".codex/config.toml", ".claude.json", ".zsh_history", ".bash_history", ".python_history",
	// Build tools' and sync tools' configs with tokens, password vaults,
	// Docker's old config, hub
	".m2/settings.xml", "gradle.properties", ".yarnrc", "pip.conf", "rclone.conf",
	"vault.kdbx", ".dockercfg", ".config/hub",
	// Agents' OAuth tokens, gcloud's legacy credentials, Azure's token cache,
	// Copilot, Netlify, Wrangler
	".gemini/oauth_creds.json", ".qwen/oauth_creds.json",
	".config/gcloud/legacy_credentials/me@example.com/adc.json",
	".azure/msal_token_cache.json", ".config/github-copilot/apps.json",
	".netlify/config.json", ".wrangler/config/default.toml",
	// More histories, ngrok, Hugging Face's token, Copilot's hosts, the
	// Firebase, Stripe and Fly CLIs' logins
	".local/share/fish/fish_history", ".psql_history", ".mysql_history", ".node_repl_history",
	".sqlite_history", ".irb_history", "ngrok.yml", ".huggingface/token",
	".cache/huggingface/token", ".config/github-copilot/hosts.json",
	".config/configstore/firebase-tools.json", ".config/stripe/config.toml", ".fly/config.yml",
}

// What the first table missed and tools document (TestSeedFloorAndBeyond).
var beyondTheSeed = []string{
	".git-credentials", ".aws/credentials", ".config/git/credentials", ".gitcookies",
	".config/glab-cli/config.yml", ".aws/sso/cache/abc.json", ".azure/accessTokens.json",
	".config/gcloud/credentials.db", "client_secret_123.apps.googleusercontent.com.json",
	".oci/config", ".config/doctl/config.yaml", ".databrickscfg", ".dbt/profiles.yml",
	".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml", ".m2/settings-security.xml",
	".config/containers/auth.json", "kubeconfig", "prod.kubeconfig", ".config/helm/repositories.yaml",
	"prod.tfstate", ".terraform.d/credentials.tfrc.json", ".vault_pass", ".pgpass", ".my.cnf",
	".password-store/email/work.gpg", ".config/Bitwarden CLI/data.json", ".config/op/config",
	"Library/Keychains/login.keychain-db", ".continue/config.json", ".kaggle/kaggle.json",
	".config/google-chrome/Default/Login Data", ".mozilla/firefox/x.default/logins.json",
	".mozilla/firefox/x.default/key4.db", "etc/wireguard/wg0.conf", "tailscaled.state",
	".htpasswd", ".envrc", "ipsec.secrets", "keystore.properties", "release.jks",
	"k8s/secret.yaml", ".sentryclirc", ".supabase/access-token",
}

// Files that look close to a rule and are not secrets.
var notSecret = []string{
	".env.example", ".env.sample", ".env.template", ".env.local.example", "example.env",
	"secrets.example.yaml", "credentials.sample.json", "secrets.go", "internal/secrets.py",
	"pkg/secret.ts", "docs/secrets.md", "id_rsa.pub", "keys/id_ed25519.pub", "public.pem",
	"certs/cacert.pem", "fullchain.pem", "locales/en/auth.json", "src/i18n/de/auth.json",
	"credentials.go", "aws/credentials.go", "src/auth/login.ts", "config.json", "README.md",
	"environment.ts", "envoy.yaml", "keyboard.c", ".github/workflows/ci.yml",
	"package.json", "go.sum", "ssh/config.go", "src/docker/config.json", "token.go",
	"history.txt", "kube/config.go", "environment/.envoy", "terraform/main.tf",
	"secretsmanager.go",
}

func TestSeedFloorAndBeyond(t *testing.T) {
	m := Default()
	for _, p := range append(append([]string{}, seedFloor...), beyondTheSeed...) {
		if _, ok := m.Match(p); !ok {
			t.Errorf("%q is not secret", p)
		}
		if _, ok := m.Match(strings.ToUpper(p)); !ok {
			t.Errorf("%q (upper case) is not secret", strings.ToUpper(p))
		}
	}
}

func TestFalsePositivesStayLow(t *testing.T) {
	m := Default()
	for _, p := range notSecret {
		if r, ok := m.Match(p); ok {
			t.Errorf("%q matched %s (%s)", p, r.Pattern, r.Reason)
		}
	}
}

// An exception frees a name, never a file inside a secret folder.
func TestExceptionsNeverFreeSecretFolders(t *testing.T) {
	m := Default()
	for _, p := range []string{".ssh/id_rsa.pub", ".ssh/secrets.go", ".gnupg/.env.example"} {
		if _, ok := m.Match(p); !ok {
			t.Errorf("%q is not secret", p)
		}
	}
}

func TestEveryRuleHasAReasonASourceAndMatchesItsExample(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Table {
		if r.Reason == "" {
			t.Errorf("%s has no reason", r.Pattern)
		}
		if r.Source == "" {
			t.Errorf("%s has no source", r.Pattern)
		}
		if seen[r.Pattern] {
			t.Errorf("%s appears twice", r.Pattern)
		}
		seen[r.Pattern] = true
		example := exampleOf(r.Pattern)
		if _, ok := naiveMatch([]Rule{r}, example); !ok {
			t.Errorf("%s does not match its own example %q", r.Pattern, example)
		}
	}
}

// exampleOf turns a pattern into a path it matches.
func exampleOf(p string) string {
	p = strings.TrimPrefix(p, "**/")
	p = strings.TrimSuffix(p, "/**")
	p = strings.ReplaceAll(p, "/**/", "/x/")
	// A character class stands for its first character: [0-9a-f] is "0".
	for {
		i := strings.IndexByte(p, '[')
		j := strings.IndexByte(p, ']')
		if i < 0 || j < i {
			break
		}
		p = p[:i] + p[i+1:i+2] + p[j+1:]
	}
	return "deep/in/" + strings.ReplaceAll(p, "*", "x")
}

// TestCompiledEqualsNaive compares the compiled matcher with the naive loop
// on every path this package names (corpus): the rules' own examples, the
// secrets, the look-alikes and the planted copies.
func TestCompiledEqualsNaive(t *testing.T) {
	t.Parallel()
	m := Default()
	for _, p := range corpus() {
		want, wok := naiveDecorated(Table, p)
		got, gok := m.Match(p)
		if wok != gok || want.Pattern != got.Pattern {
			t.Errorf("%q: compiled %v %q, naive %v %q", p, gok, got.Pattern, wok, want.Pattern)
		}
	}
}

func corpus() []string {
	c := append(append(append([]string{}, seedFloor...), beyondTheSeed...), notSecret...)
	for _, r := range Table {
		c = append(c, exampleOf(r.Pattern), strings.ToUpper(exampleOf(r.Pattern)))
		for _, ex := range r.Except {
			c = append(c, exampleOf(ex))
		}
	}
	c = append(c, plantedCopies...)
	return append(c, "", ".", "/", "//", "a//b/.env", "/abs/.ssh/x", "./.env", "a/./b/id_rsa",
		"../x/.npmrc", ".ssh", "a/.ssh/", "É/.ENV", "İd_rsa", "gcloud/legacy_credentials/adc.json",
		"gcloud/legacy_credentials/a/b/adc.json", "ab", "credentials.json.bak", "id_rsa.pub~",
		".ssh.bak/config", "%home%a%.aws%credentials", ".env.Ab12Cd", "key (Копия).pem", ".Env - KOPIE/x")
}

// FuzzCompiledEqualsNaive searches for a path on which the compiled matcher
// and the naive loop disagree. Fuzzing (go test -fuzz FuzzCompiledEqualsNaive
// ./secretfiles/) starts from every path of corpus; a unit run checks a few
// seeds of each kind only, since TestCompiledEqualsNaive compares the whole
// corpus already and each seed would be a subtest of its own.
func FuzzCompiledEqualsNaive(f *testing.F) {
	seeds := []string{"", "/", "a//b/.env", "../x/.npmrc", "É/.ENV", "İd_rsa", "id_rsa.pub~",
		".ssh.bak/config", "%home%a%.aws%credentials", "key (Копия).pem", ".Env - KOPIE/x",
		"#.env#", "key.pem.bak", ".env.example", "locales/en/auth.json", "src/docker/config.json"}
	if fuzzing() {
		seeds = corpus()
	}
	for _, p := range seeds {
		f.Add(p)
	}
	m := Default()
	f.Fuzz(func(t *testing.T, p string) {
		want, wok := naiveDecorated(Table, p)
		got, gok := m.Match(p)
		if wok != gok || want.Pattern != got.Pattern {
			t.Fatalf("%q: compiled %v %q, naive %v %q", p, gok, got.Pattern, wok, want.Pattern)
		}
	})
}

// fuzzing reports whether this run fuzzes (-test.fuzz is set), as opposed to
// running the fuzz targets' seeds as unit tests.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

func TestCompileRefusesBadPatterns(t *testing.T) {
	for _, p := range []string{".env", "**/[", "**/UPPER", "/abs"} {
		if _, err := Compile([]Rule{{Pattern: p, Reason: "x"}}); err == nil {
			t.Errorf("Compile accepted %q", p)
		}
	}
}

func TestScopeMatchesFromHome(t *testing.T) {
	m := Default()
	home := "/home/ann"
	// The attack: serving ~/.aws makes its config file "config", which
	// names credential processes and SSO sessions.
	if _, ok := m.Match("config"); ok {
		t.Fatal("bare 'config' matched by name alone; the scope test proves nothing")
	}
	aws := m.For("/home/ann/.aws", home)
	if _, ok := aws.Match("config"); !ok {
		t.Fatal("~/.aws/config is not secret when ~/.aws is the checkout")
	}
	ssh := m.For("/home/ann/.ssh", home)
	if _, ok := ssh.Match("id_rsa.pub"); !ok {
		t.Fatal("~/.ssh/id_rsa.pub is not secret when ~/.ssh is the checkout")
	}
	proj := m.For("/home/ann/code/app", home)
	if _, ok := proj.Match("main.go"); ok {
		t.Fatal("main.go is secret")
	}
	if _, ok := proj.MatchAbs("/home/ann/.kube/config"); !ok {
		t.Fatal("a symlink to ~/.kube/config is not secret")
	}
	outside := m.For("/srv/app", home)
	if _, ok := outside.MatchAbs("/etc/wireguard/wg0.conf"); !ok {
		t.Fatal("a symlink to /etc/wireguard/wg0.conf is not secret")
	}
	if _, ok := outside.Match("config"); ok {
		t.Fatal("config outside home matched by the home rule")
	}
	sibling := m.For("/home/annex/.aws", home)
	if _, ok := sibling.Match("config"); ok {
		t.Fatal("/home/annex is not inside /home/ann")
	}
}

// ruleNamed returns the table's rule for pattern, without its exceptions:
// what the rule alone would say.
func ruleNamed(t *testing.T, pattern string) Rule {
	t.Helper()
	for _, r := range Table {
		if r.Pattern == pattern {
			r.Except = nil
			return r
		}
	}
	t.Fatalf("no rule %s", pattern)
	return Rule{}
}

// CI definitions are code: they name the secrets a CI system injects.
// trufflehog's own .github/workflows/secrets.yml was flagged as a secrets
// file; the rule alone still matches it, the exception frees it.
func TestCIDefinitionsAreCode(t *testing.T) {
	m := Default()
	for _, c := range []struct{ path, rule string }{
		{".github/workflows/secrets.yml", "**/secrets.*"},
		{".github/workflows/rotate-credentials.yml", "**/*-credentials.*"},
		{".github/workflows/api_key-rotation.yml", "**/*api_key*"},
		{".gitlab/ci/secrets.gitlab-ci.yml", "**/secrets.*"},
		{".circleci/secrets.yml", "**/secrets.*"},
	} {
		if _, ok := naiveMatch([]Rule{ruleNamed(t, c.rule)}, c.path); !ok {
			t.Errorf("%s alone does not match %q; the test proves nothing", c.rule, c.path)
		}
		if r, ok := m.Match(c.path); ok {
			t.Errorf("%q (a CI definition) matched %s", c.path, r.Pattern)
		}
	}
	for _, p := range []string{".gitlab-ci.yml", ".circleci/config.yml", "Jenkinsfile",
		"azure-pipelines.yml", ".travis.yml", "bitbucket-pipelines.yml", ".drone.yml",
		".github/workflows/ci.yml", ".buildkite/pipeline.yml"} {
		if r, ok := m.Match(p); ok {
			t.Errorf("%q (a CI definition) matched %s", p, r.Pattern)
		}
	}
	// A CLI's credentials in its own folder are not a pipeline.
	if _, ok := m.Match(".circleci/cli.yml"); !ok {
		t.Error(".circleci/cli.yml (the CircleCI CLI's token) is not secret")
	}
}

// Certificates, CA bundles and public keys are public; the private half
// beside them stays secret.
func TestPublicKeysAndCertificatesAreNotSecret(t *testing.T) {
	m := Default()
	for _, c := range []struct{ path, rule string }{
		{"tls/server-cert.pem", "**/*.pem"},
		{"certs/ca-bundle.pem", "**/*.pem"},
		{"letsencrypt/live/example.org/fullchain.pem", "**/*.pem"},
		{"pki/digicert-global-root.pem", "**/*.pem"},
		{"etc/kubernetes/pki/front-proxy-ca.crt", "**/kubernetes/pki/**"},
		{"deploy/id_ed25519.pub", "**/id_ed25519*"},
		{"keys/signing_public.key", "**/*.key"},
		{"debian/upstream/signing-key.asc", "**/*key*.asc"},
		{"sops/age/recipients.txt", "**/age/*.txt"},
		{"keys/release-pubkey.asc", "**/*key*.asc"},
		{"usr/share/keyrings/docker-archive-keyring.gpg", "**/*.gpg"},
	} {
		if _, ok := naiveMatch([]Rule{ruleNamed(t, c.rule)}, c.path); !ok {
			t.Errorf("%s alone does not match %q; the test proves nothing", c.rule, c.path)
		}
		if r, ok := m.Match(c.path); ok {
			t.Errorf("%q (public) matched %s", c.path, r.Pattern)
		}
	}
	for _, p := range []string{"certs/server.crt", "ca.cer", "certs/request.csr"} {
		if r, ok := m.Match(p); ok {
			t.Errorf("%q (public) matched %s", p, r.Pattern)
		}
	}
	for _, p := range []string{"tls/server-key.pem", "tls/ca-key.pem", "letsencrypt/live/example.org/privkey.pem",
		"etc/kubernetes/pki/front-proxy-ca.key", "tls/server.key", "deploy/id_ed25519", "keys/cert-key.pem",
		"keys/release-secret.asc", "sops/age/keys.txt", ".gnupg/pubring.kbx", ".ssh/id_rsa.pub"} {
		if _, ok := m.Match(p); !ok {
			t.Errorf("%q (private, or in a secret folder) is not secret", p)
		}
	}
}

// Templates, documentation, schemas, assets and source files share secret
// files' names; each is freed by its kind's exception, not by a name.
func TestLookalikesByKind(t *testing.T) {
	m := Default()
	for _, c := range []struct{ path, rule string }{
		{"deploy/sftp-config.sample.json", "**/sftp-config*.json"},
		{"config/secrets.example.yml", "**/secrets.*"},
		{"infra/prod.example.tfvars", "**/*.tfvars"},
		{"ops/creds.sample.yaml", "**/creds.*"},
		{"docs/api-keys.md", "**/*api-key*"},
		{"pkg/auth/credentials.rs", "**/credentials.*"},
		{"bin/fetch-secrets.sh", "**/*-secrets.*"},
		{"schemas/credentials.schema.json", "**/credentials*.json"},
		{"img/passwords.svg", "**/passwords.*"},
		{"share/man/man5/secrets.5", "**/secrets.*"},
		{"po/de/secrets.po", "**/secrets.*"},
		{"data/common-passwords.txt", "**/*password*.txt"},
		{"k8s/sealed-secrets.yaml", "**/*-secrets.*"},
		{"charts/app/templates/secret.yaml", "**/secret.*"},
		{"models/bert/tokenizer.json", "**/*token*.json"},
		{".secrets.baseline", "**/*secrets*"},
	} {
		if _, ok := naiveMatch([]Rule{ruleNamed(t, c.rule)}, c.path); !ok {
			t.Errorf("%s alone does not match %q; the test proves nothing", c.rule, c.path)
		}
		if r, ok := m.Match(c.path); ok {
			t.Errorf("%q (a look-alike) matched %s", c.path, r.Pattern)
		}
	}
	// The real files of the same names stay secret.
	for _, p := range []string{"deploy/sftp-config.json", "config/database.yml", "infra/prod.tfvars",
		".config/openstack/clouds.yaml", "api-keys.txt", "credentials.yaml", "secrets.sh",
		"common/credentials.json", "secrets/db_password.txt", "k8s/db-secrets.yaml", "token.json"} {
		if _, ok := m.Match(p); !ok {
			t.Errorf("%q is not secret", p)
		}
	}
}

// A tool's credentials match in each system's spelling of its folder, under
// any folder (a home copied into a backup is still a home), in any case.
func TestPerOSLocations(t *testing.T) {
	m := Default()
	homes := []string{"", "backup/2024-06-01/home/ann/", "Users/ann/", "mnt/c/Users/Ann/"}
	for _, p := range []string{
		".config/gh/hosts.yml", "AppData/Roaming/GitHub CLI/hosts.yml",
		".config/gcloud/credentials.db", "AppData/Roaming/gcloud/credentials.db",
		".config/doctl/config.yaml", "Library/Application Support/doctl/config.yaml", "AppData/Roaming/doctl/config.yaml",
		".config/netlify/config.json", "Library/Preferences/netlify/config.json", "AppData/Roaming/netlify/Config/config.json",
		".config/pypoetry/auth.toml", "Library/Application Support/pypoetry/auth.toml", "AppData/Roaming/pypoetry/auth.toml",
		".config/pip/pip.conf", "Library/Application Support/pip/pip.conf", "AppData/Roaming/pip/pip.ini",
		".nuget/NuGet/NuGet.Config", "AppData/Roaming/NuGet/NuGet.Config",
		".pgpass", "AppData/Roaming/postgresql/pgpass.conf", "AppData/Roaming/postgresql/psql_history",
		".subversion/auth/svn.simple/0123abcd", "AppData/Roaming/Subversion/auth/svn.simple/0123abcd",
		".config/sops/age/keys.txt", "Library/Application Support/sops/age/keys.txt", "AppData/Roaming/sops/age/keys.txt",
		".local/share/fish/fish_history", "AppData/Roaming/Microsoft/Windows/PowerShell/PSReadLine/ConsoleHost_history.txt",
		".local/share/powershell/PSReadLine/ConsoleHost_history.txt",
		".config/Bitwarden/data.json", "Library/Application Support/Bitwarden/data.json", "AppData/Roaming/Bitwarden/data.json",
		"Library/Application Support/Claude/claude_desktop_config.json", "AppData/Roaming/Claude/claude_desktop_config.json",
		".config/filezilla/sitemanager.xml", "AppData/Roaming/FileZilla/sitemanager.xml",
		".purple/accounts.xml", "AppData/Roaming/.purple/accounts.xml",
		".config/hexchat/servlist.conf", "AppData/Roaming/HexChat/servlist.conf",
		".electrum/wallets/default_wallet", "AppData/Roaming/Electrum/wallets/default_wallet",
		"AppData/Local/Google/Chrome/User Data/Default/Login Data",
		"Library/Application Support/Google/Chrome/Default/Login Data",
		".local/share/keyrings/login.keyring", ".local/share/kwalletd/kdewallet.kwl",
		"Library/Keychains/login.keychain-db", "AppData/Local/ngrok/ngrok.yml",
	} {
		for _, h := range homes {
			for _, q := range []string{h + p, strings.ToUpper(h + p)} {
				if _, ok := m.Match(q); !ok {
					t.Errorf("%q is not secret", q)
				}
			}
		}
	}
}

// Rules with the same exceptions share one compiled set; lists that differ,
// even only where one pattern ends and the next begins, do not, and each
// rule still frees only the paths its own list names.
func TestExceptionSetsShared(t *testing.T) {
	m, err := Compile([]Rule{
		{Pattern: "**/*.key", Except: []string{"**/example.key", "**/test*.key"}},
		{Pattern: "**/*.pem", Except: []string{"**/example.key", "**/test*.key"}},
		{Pattern: "**/*.p12", Except: []string{"**/example.key", "**/test*.p12"}},
		{Pattern: "**/*.jks", Except: []string{"**/ab", "**/c"}},
		{Pattern: "**/*.gpg", Except: []string{"**/a", "**/bc"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.except[0] != m.except[1] {
		t.Error("two rules with the same exceptions compiled them twice")
	}
	if m.except[0] == m.except[2] || m.except[3] == m.except[4] {
		t.Error("rules with different exceptions share a set")
	}
	if listKey([]string{"**/ab", "**/c"}) == listKey([]string{"**/a", "**/bc"}) {
		t.Error("two lists have one key")
	}
	for path, secret := range map[string]bool{"test1.key": false, "test1.p12": false, "test1.pem": true, "x.p12": true, "example.key": false} {
		if _, got := m.Match(path); got != secret {
			t.Errorf("%s: secret %v, want %v", path, got, secret)
		}
	}
}
