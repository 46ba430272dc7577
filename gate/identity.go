package gate

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// Identity names the GitHub repository a checkout's config points at, as
// owner/name ("" when there is none). Where a pull request goes is gh's
// business: the gate asks gh (github.go), not a second reading of the config.
type Identity struct {
	// Origin is remote.origin.url's repository: what a project is.
	Origin string `json:"origin,omitempty"`
}

// maxConfigFile bounds the config file read for identity.
const maxConfigFile = 1 << 20

// Identity reads the repository from the checkout's config file directly:
// no git process (it names a repository, it never decides anything the gate
// does), no [include] or [includeIf] followed, and a symlinked or oversized
// config ignored (TestIdentityIgnoresSymlinkedConfig; fsguard.ReadMetadata
// says why a metadata read refuses what it refuses). go-git's parser is the right
// tool here because nothing it decides opens a door.
func (r *Repo) Identity() Identity {
	data, err := fsguard.ReadMetadata(filepath.Join(r.commonDir, "config"), maxConfigFile)
	if err != nil {
		return Identity{}
	}
	return identityOf(data)
}

func identityOf(data []byte) Identity {
	cfg := format.New()
	if err := format.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return Identity{}
	}
	// the last url the [remote "origin"] sections give, as
	// git config --get remote.origin.url reads it
	var url string
	for _, s := range cfg.Section("remote").Subsections {
		if s.Name == "origin" {
			if u := lastOf(s.Options.GetAll("url")); u != "" {
				url = u
			}
		}
	}
	return Identity{Origin: GitHubRepo(url)}
}

func lastOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// GitHubRepo returns owner/name for a remote URL on a GitHub host
// (github.com, or gh's GH_HOST) in any form gh reads (https, ssh, git, or
// scp-like git@github.com:owner/name), "" for anything else.
func GitHubRepo(u string) string {
	host, owner, name, ok := GitHubURL(u)
	if !ok || !slices.Contains(GitHubHosts(), host) {
		return ""
	}
	return owner + "/" + name
}

// The grammar of GitHub's repository names and URLs, shared by Identity and
// package github (which resolves, pins and clones repositories with it):
// kept here, below both, so there is one.

// GitHubHosts are the hosts gatehouse treats as GitHub: github.com and the
// Enterprise host gh is pointed at (GH_HOST), last.
func GitHubHosts() []string {
	hosts := []string{"github.com"}
	if h := strings.ToLower(os.Getenv("GH_HOST")); h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// GitHubURL reads a remote URL as gh does (git.ParseURL and
// ghrepo.FromURL): scp-like user@host:owner/name, or ssh, git, http(s)
// URLs; the path must be exactly owner/name (".git" dropped), each a
// GitHubName. The host is lowercased, "www." dropped; a web URL keeps its
// port (an Enterprise host on another port), an SSH one does not (that
// port is SSH's). Any host is read: GitHubHosts says which are GitHub.
func GitHubURL(raw string) (host, owner, name string, ok bool) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		user, rest, ok := strings.Cut(s, "@")
		if !ok {
			rest, user = s, ""
		}
		host, path, ok := strings.Cut(rest, ":")
		if !ok || host == "" || strings.Contains(host, "/") || (user == "" && !strings.Contains(raw, "@")) {
			return "", "", "", false
		}
		s = "ssh://" + user + "@" + host + "/" + strings.TrimPrefix(path, "/")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", "", "", false
	}
	host = u.Host
	switch strings.TrimPrefix(u.Scheme, "git+") {
	case "ssh", "git":
		host = u.Hostname()
	case "http", "https":
	default:
		return "", "", "", false
	}
	host = strings.TrimPrefix(strings.ToLower(host), "www.")
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 2 {
		return "", "", "", false
	}
	name = strings.TrimSuffix(parts[1], ".git")
	if !GitHubName(parts[0]) || !GitHubName(name) {
		return "", "", "", false
	}
	return host, parts[0], name, true
}

// GitHubName is an owner or repository name GitHub allows: letters,
// digits, '-', '_' and '.', and never one that reads as an option or, as a
// folder a clone makes, as a git folder in any spelling (.git, .GIT, .git.,
// git~1).
func GitHubName(s string) bool {
	if s == "" || len(s) > 100 || s[0] == '-' || s == "." || s == ".." || fsguard.IsGitName(s) {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
