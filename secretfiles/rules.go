package secretfiles

// Rule is one line of the secret table: a pattern, why it is there, and the
// names that look like it but are not secrets.
//
// Patterns are doublestar globs over the lower-cased, slash-separated path,
// each starting with "**/" so they match at any depth. The shapes the
// compiler recognises (a name, a name prefix or suffix, a folder anywhere, a
// path suffix) are answered from maps and tables; anything else falls back to
// doublestar itself, pre-filtered by the pattern's last segment.
type Rule struct {
	Pattern string
	Reason  string
	// Except lists patterns that exempt a path this rule matched: committed
	// templates, public keys, source files that merely mention credentials.
	// Exceptions belong to their rule only, so an exception for a name never
	// frees a file inside a secret folder such as ~/.ssh.
	Except []string
}

// templates are committed examples of secret files, shared with a team on
// purpose: .env.example, secrets.sample.yaml, credentials.template.json.
var templates = []string{
	"**/*.example", "**/*.sample", "**/*.template", "**/*.dist", "**/*.tmpl", "**/*.tpl",
	"**/*.example.*", "**/*.sample.*", "**/*.template.*",
	"**/example.env", "**/sample.env", "**/template.env",
}

// publicKeys are key files that hold only the public half (outside a .ssh or
// .gnupg folder, whose own rules keep everything in them secret).
var publicKeys = []string{"**/*.pub"}

// publicPEM are PEM files that conventionally hold certificates or public
// keys, not private keys.
var publicPEM = []string{
	"**/*public*", "**/*.pub.pem", "**/cacert.pem", "**/ca-bundle.pem",
	"**/ca-certificates.pem", "**/fullchain.pem", "**/chain.pem",
}

// sourceCode exempts program source and documentation named like a data file
// (secrets.go, secret.py, secrets.md): code that handles secrets is not one.
// Shell scripts stay secret: a secrets.sh is usually a list of exports.
var sourceCode = []string{
	"**/*.go", "**/*.py", "**/*.js", "**/*.mjs", "**/*.cjs", "**/*.ts", "**/*.tsx",
	"**/*.jsx", "**/*.rb", "**/*.rs", "**/*.java", "**/*.kt", "**/*.kts", "**/*.scala",
	"**/*.swift", "**/*.c", "**/*.h", "**/*.cc", "**/*.cpp", "**/*.hpp", "**/*.cs",
	"**/*.php", "**/*.pl", "**/*.pm", "**/*.lua", "**/*.dart", "**/*.ex", "**/*.exs",
	"**/*.erl", "**/*.hs", "**/*.ml", "**/*.clj", "**/*.groovy", "**/*.vue",
	"**/*.svelte", "**/*.md", "**/*.rst", "**/*.adoc", "**/*.html", "**/*.css",
	"**/*.scss", "**/*.proto", "**/*.graphql",
}

// i18n exempts translation catalogues that share a secret file's name
// (locales/en/auth.json holds the sign-in page's strings).
var i18n = []string{
	"**/locales/**", "**/locale/**", "**/i18n/**", "**/lang/**", "**/langs/**",
	"**/translations/**", "**/messages/**",
}

func join(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var templatesOrCode = join(templates, sourceCode)

// Table is every secret rule, in the order they are reported. The seed's
// union (its first SECRET_FILES and SECRET_PATHS and every round's additions)
// is the floor; the rest comes from the credential files that tools document
// and the names secret scanners match.
var Table = []Rule{
	// Environment files.
	{Pattern: "**/.env", Reason: "dotenv file: environment variables, usually API keys and passwords"},
	{Pattern: "**/.env.*", Reason: "dotenv variant (.env.local, .env.production)", Except: templates},
	{Pattern: "**/*.env", Reason: "environment file (prod.env)", Except: templates},
	{Pattern: "**/.envrc", Reason: "direnv file: exports credentials into the shell"},

	// SSH, GnuPG and private key material.
	{Pattern: "**/.ssh/**", Reason: "SSH folder: private keys, known hosts, agent config"},
	{Pattern: "**/.gnupg/**", Reason: "GnuPG folder: private keyring and trust database"},
	{Pattern: "**/id_rsa*", Reason: "SSH RSA private key", Except: publicKeys},
	{Pattern: "**/id_ed25519*", Reason: "SSH Ed25519 private key", Except: publicKeys},
	{Pattern: "**/id_ecdsa*", Reason: "SSH ECDSA private key", Except: publicKeys},
	{Pattern: "**/id_dsa*", Reason: "SSH DSA private key", Except: publicKeys},
	{Pattern: "**/*.pem", Reason: "PEM file: private keys and certificates", Except: publicPEM},
	{Pattern: "**/*.key", Reason: "private key", Except: publicPEM},
	{Pattern: "**/*.p12", Reason: "PKCS#12 key store"},
	{Pattern: "**/*.pfx", Reason: "PKCS#12 key store"},
	{Pattern: "**/*.pkcs12", Reason: "PKCS#12 key store"},
	{Pattern: "**/*.p8", Reason: "PKCS#8 private key (App Store Connect, APNs)"},
	{Pattern: "**/*.ppk", Reason: "PuTTY private key"},
	{Pattern: "**/*.keystore", Reason: "Java or Android key store"},
	{Pattern: "**/*.jks", Reason: "Java key store"},
	{Pattern: "**/keystore.properties", Reason: "Android signing passwords"},
	{Pattern: "**/*.gpg", Reason: "GnuPG-encrypted file or keyring"},
	{Pattern: "**/secring.*", Reason: "GnuPG secret keyring"},

	// Git and git hosting.
	{Pattern: "**/.git-credentials", Reason: "git credential store: plain-text tokens"},
	{Pattern: "**/.config/git/credentials", Reason: "git credential store (XDG location)"},
	{Pattern: "**/.gitcookies", Reason: "git http cookie file (Gerrit, googlesource)"},
	{Pattern: "**/gh/hosts.yml", Reason: "GitHub CLI: OAuth tokens"},
	{Pattern: "**/.config/hub", Reason: "hub CLI: GitHub token"},
	{Pattern: "**/glab-cli/config.yml", Reason: "GitLab CLI: tokens"},
	{Pattern: "**/tea/config.yml", Reason: "Gitea CLI: tokens"},
	{Pattern: "**/.netrc", Reason: "netrc: machine logins and passwords"},
	{Pattern: "**/_netrc", Reason: "netrc (Windows name)"},

	// Cloud CLIs.
	{Pattern: "**/.aws/credentials", Reason: "AWS CLI: access keys"},
	{Pattern: "**/.aws/config", Reason: "AWS CLI: profiles, SSO and credential processes"},
	{Pattern: "**/.aws/sso/cache/**", Reason: "AWS SSO token cache"},
	{Pattern: "**/.aws/cli/cache/**", Reason: "AWS CLI assumed-role credential cache"},
	{Pattern: "**/credentials.csv", Reason: "AWS console credential download"},
	{Pattern: "**/*_accesskeys.csv", Reason: "AWS console access key download"},
	{Pattern: "**/application_default_credentials.json", Reason: "Google Cloud application default credentials"},
	{Pattern: "**/gcloud/legacy_credentials/*/adc.json", Reason: "Google Cloud legacy credentials"},
	{Pattern: "**/gcloud/credentials.db", Reason: "Google Cloud credential database"},
	{Pattern: "**/gcloud/access_tokens.db", Reason: "Google Cloud access token cache"},
	{Pattern: "**/client_secret*.json", Reason: "Google OAuth client secret"},
	{Pattern: "**/.azure/msal_token_cache.*", Reason: "Azure CLI token cache"},
	{Pattern: "**/.azure/accesstokens.json", Reason: "Azure CLI access tokens (older versions)"},
	{Pattern: "**/.azure/service_principal_entries.json", Reason: "Azure CLI service principal secrets"},
	{Pattern: "**/.oci/config", Reason: "Oracle Cloud CLI profile and key path"},
	{Pattern: "**/doctl/config.yaml", Reason: "DigitalOcean CLI: API token"},
	{Pattern: "**/hcloud/cli.toml", Reason: "Hetzner Cloud CLI: API tokens"},
	{Pattern: "**/.config/linode-cli", Reason: "Linode CLI: API token"},
	{Pattern: "**/.aliyun/config.json", Reason: "Alibaba Cloud CLI: access keys"},
	{Pattern: "**/scw/config.yaml", Reason: "Scaleway CLI: secret key"},
	{Pattern: "**/.bluemix/config.json", Reason: "IBM Cloud CLI: tokens"},
	{Pattern: "**/.databrickscfg", Reason: "Databricks CLI: tokens"},
	{Pattern: "**/.snowflake/connections.toml", Reason: "Snowflake CLI: connection passwords"},
	{Pattern: "**/.snowsql/config", Reason: "SnowSQL: connection passwords"},
	{Pattern: "**/.dbt/profiles.yml", Reason: "dbt: warehouse passwords"},
	{Pattern: "**/.boto", Reason: "boto and gsutil: cloud credentials"},
	{Pattern: "**/.s3cfg", Reason: "s3cmd: access keys"},
	{Pattern: "**/rclone.conf", Reason: "rclone: remote storage credentials"},
	{Pattern: "**/.netlify/config.json", Reason: "Netlify CLI: access token"},
	{Pattern: "**/.wrangler/config/default.toml", Reason: "Cloudflare Wrangler: OAuth token"},
	{Pattern: "**/.fly/config.yml", Reason: "Fly.io CLI: access token"},
	{Pattern: "**/.config/stripe/config.toml", Reason: "Stripe CLI: API keys"},
	{Pattern: "**/configstore/firebase-tools.json", Reason: "Firebase CLI: refresh token"},
	{Pattern: "**/.supabase/access-token", Reason: "Supabase CLI: access token"},
	{Pattern: "**/ngrok.yml", Reason: "ngrok: auth token"},
	{Pattern: "**/.sentryclirc", Reason: "Sentry CLI: auth token"},

	// Service-account and credential files by name.
	{Pattern: "**/credentials*.json", Reason: "credentials file", Except: templates},
	{Pattern: "**/.credentials.json", Reason: "credentials file (Claude Code and others)"},
	{Pattern: "**/*-credentials.json", Reason: "credentials file", Except: templates},
	{Pattern: "**/credentials.toml", Reason: "credentials file (Cargo and others)"},
	{Pattern: "**/service-account*.json", Reason: "cloud service-account key", Except: templates},
	{Pattern: "**/service_account*.json", Reason: "cloud service-account key", Except: templates},
	{Pattern: "**/*-service-account*.json", Reason: "cloud service-account key", Except: templates},
	{Pattern: "**/serviceaccountkey.json", Reason: "Firebase service-account key"},
	{Pattern: "**/firebase-adminsdk*.json", Reason: "Firebase Admin SDK key"},
	{Pattern: "**/secrets.*", Reason: "secrets file (secrets.json, secrets.yaml, secrets.toml)", Except: templatesOrCode},
	{Pattern: "**/secret.*", Reason: "secret file (a Kubernetes secret.yaml, secret.json)", Except: templatesOrCode},
	{Pattern: "**/ipsec.secrets", Reason: "IPsec pre-shared keys"},
	{Pattern: "**/auth.json", Reason: "auth file (Composer, Codex, opencode, containers)", Except: i18n},

	// Package managers and build tools.
	{Pattern: "**/.npmrc", Reason: "npm: registry tokens"},
	{Pattern: "**/.yarnrc", Reason: "Yarn 1: registry tokens"},
	{Pattern: "**/.yarnrc.yml", Reason: "Yarn Berry: npmAuthToken"},
	{Pattern: "**/.pypirc", Reason: "PyPI upload credentials"},
	{Pattern: "**/pip.conf", Reason: "pip: index URLs with credentials"},
	{Pattern: "**/.gem/credentials", Reason: "RubyGems API key"},
	{Pattern: "**/.cargo/credentials", Reason: "Cargo registry token"},
	{Pattern: "**/.m2/settings.xml", Reason: "Maven: repository passwords"},
	{Pattern: "**/settings-security.xml", Reason: "Maven master password"},
	{Pattern: "**/gradle.properties", Reason: "Gradle: signing and repository passwords"},
	{Pattern: "**/pub-credentials.json", Reason: "Dart pub: OAuth credentials"},
	{Pattern: "**/.config/composer/auth.json", Reason: "Composer: repository tokens"},

	// Containers and clusters.
	{Pattern: "**/.docker/config.json", Reason: "Docker: registry auth"},
	{Pattern: "**/.dockercfg", Reason: "Docker (old format): registry auth"},
	{Pattern: "**/containers/auth.json", Reason: "Podman and Buildah: registry auth"},
	{Pattern: "**/.kube/config", Reason: "kubectl: cluster credentials"},
	{Pattern: "**/kubeconfig", Reason: "Kubernetes cluster credentials"},
	{Pattern: "**/kubeconfig.yaml", Reason: "Kubernetes cluster credentials"},
	{Pattern: "**/kubeconfig.yml", Reason: "Kubernetes cluster credentials"},
	{Pattern: "**/*.kubeconfig", Reason: "Kubernetes cluster credentials"},
	{Pattern: "**/helm/repositories.yaml", Reason: "Helm: chart repository passwords"},
	{Pattern: "**/.talos/config", Reason: "Talos: cluster credentials"},

	// Infrastructure tools.
	{Pattern: "**/terraform.tfstate*", Reason: "Terraform state: every secret of the infrastructure"},
	{Pattern: "**/*.tfstate", Reason: "Terraform state"},
	{Pattern: "**/*.tfstate.backup", Reason: "Terraform state backup"},
	{Pattern: "**/.terraformrc", Reason: "Terraform CLI: registry tokens"},
	{Pattern: "**/terraform.rc", Reason: "Terraform CLI (Windows name): registry tokens"},
	{Pattern: "**/.vault-token", Reason: "HashiCorp Vault token"},
	{Pattern: "**/.vault_pass", Reason: "Ansible Vault password"},
	{Pattern: "**/.vault_pass.txt", Reason: "Ansible Vault password"},
	{Pattern: "**/.vault-password", Reason: "Ansible Vault password"},
	{Pattern: "**/.vault_password", Reason: "Ansible Vault password"},

	// Databases.
	{Pattern: "**/.pgpass", Reason: "PostgreSQL passwords"},
	{Pattern: "**/.my.cnf", Reason: "MySQL client passwords"},
	{Pattern: "**/.mylogin.cnf", Reason: "MySQL login path (obfuscated passwords)"},
	{Pattern: "**/influxdb2/configs", Reason: "InfluxDB CLI: tokens"},

	// Password managers.
	{Pattern: "**/*.kdbx", Reason: "KeePass database"},
	{Pattern: "**/*.kdb", Reason: "KeePass 1 database"},
	{Pattern: "**/.password-store/**", Reason: "pass: encrypted password store"},
	{Pattern: "**/.lpass/**", Reason: "LastPass CLI: session and vault cache"},
	{Pattern: "**/bitwarden cli/data.json", Reason: "Bitwarden CLI: encrypted vault and session"},
	{Pattern: "**/.config/op/config", Reason: "1Password CLI: account and session"},
	{Pattern: "**/.op/config", Reason: "1Password CLI (older location)"},
	{Pattern: "**/*.keychain", Reason: "macOS keychain"},
	{Pattern: "**/*.keychain-db", Reason: "macOS keychain"},

	// AI coding tools and MCP servers.
	{Pattern: "**/.claude.json", Reason: "Claude Code user config: OAuth account and MCP servers"},
	{Pattern: "**/.claude/settings.local.json", Reason: "Claude Code local settings: tokens in env"},
	{Pattern: "**/.mcp.json", Reason: "MCP servers: tokens in their env"},
	{Pattern: "**/.cursor/mcp.json", Reason: "Cursor MCP servers"},
	{Pattern: "**/.vscode/mcp.json", Reason: "VS Code MCP servers"},
	{Pattern: "**/.roo/mcp.json", Reason: "Roo MCP servers"},
	{Pattern: "**/windsurf/mcp_config.json", Reason: "Windsurf MCP servers"},
	{Pattern: "**/.gemini/settings.json", Reason: "Gemini CLI: MCP servers and keys"},
	{Pattern: "**/.gemini/oauth_creds.json", Reason: "Gemini CLI: OAuth tokens"},
	{Pattern: "**/.qwen/oauth_creds.json", Reason: "Qwen Code: OAuth tokens"},
	{Pattern: "**/.codex/config.toml", Reason: "Codex CLI: MCP servers and providers"},
	{Pattern: "**/.continue/config.json", Reason: "Continue: model API keys"},
	{Pattern: "**/.continue/config.yaml", Reason: "Continue: model API keys"},
	{Pattern: "**/github-copilot/apps.json", Reason: "GitHub Copilot: OAuth tokens"},
	{Pattern: "**/github-copilot/hosts.json", Reason: "GitHub Copilot: OAuth tokens"},
	{Pattern: "**/huggingface/token", Reason: "Hugging Face token (~/.cache/huggingface)"},
	{Pattern: "**/.huggingface/token", Reason: "Hugging Face token (older location)"},
	{Pattern: "**/kaggle.json", Reason: "Kaggle API key"},
	{Pattern: "**/io.datasette.llm/keys.json", Reason: "llm CLI: API keys"},

	// Browsers.
	{Pattern: "**/login data", Reason: "Chromium saved passwords"},
	{Pattern: "**/login data for account", Reason: "Chromium saved passwords"},
	{Pattern: "**/web data", Reason: "Chromium autofill and tokens"},
	{Pattern: "**/cookies", Reason: "Chromium cookies (session tokens)"},
	{Pattern: "**/local state", Reason: "Chromium: the key that decrypts saved passwords"},
	{Pattern: "**/cookies.sqlite", Reason: "Firefox cookies (session tokens)"},
	{Pattern: "**/logins.json", Reason: "Firefox saved passwords"},
	{Pattern: "**/key4.db", Reason: "Firefox key database"},
	{Pattern: "**/key3.db", Reason: "Firefox key database (older)"},
	{Pattern: "**/signons.sqlite", Reason: "Firefox saved passwords (older)"},
	{Pattern: "**/cookies.binarycookies", Reason: "Safari cookies"},

	// VPNs.
	{Pattern: "**/*.ovpn", Reason: "OpenVPN profile: keys and credentials"},
	{Pattern: "**/wireguard/*.conf", Reason: "WireGuard interface: private key"},
	{Pattern: "**/tailscaled.state", Reason: "Tailscale node key"},

	// Shell and REPL histories: pasted tokens and passwords.
	{Pattern: "**/.bash_history", Reason: "shell history"},
	{Pattern: "**/.zsh_history", Reason: "shell history"},
	{Pattern: "**/.sh_history", Reason: "shell history"},
	{Pattern: "**/.ksh_history", Reason: "shell history"},
	{Pattern: "**/fish_history", Reason: "shell history"},
	{Pattern: "**/.python_history", Reason: "REPL history"},
	{Pattern: "**/.node_repl_history", Reason: "REPL history"},
	{Pattern: "**/.irb_history", Reason: "REPL history"},
	{Pattern: "**/.pry_history", Reason: "REPL history"},
	{Pattern: "**/.psql_history", Reason: "database shell history"},
	{Pattern: "**/.mysql_history", Reason: "database shell history"},
	{Pattern: "**/.sqlite_history", Reason: "database shell history"},
	{Pattern: "**/.rediscli_history", Reason: "database shell history"},
	{Pattern: "**/.dbshell", Reason: "MongoDB shell history"},

	// Other credential files.
	{Pattern: "**/.htpasswd", Reason: "HTTP basic-auth password hashes"},
	{Pattern: "**/connect-secrets.json", Reason: "remote-access relay token and device key"},
	{Pattern: "**/connect-grants.json", Reason: "remote-access device grants"},
}
