package github

import (
	"net/url"
	"os"
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
)

// Origin names the GitHub repository a checkout's origin points at, as
// owner/name ("" when there is none, or when it is not on a GitHub host):
// what a project is, in projects.list. Where a pull request goes is gh's
// business (resolve, from git's own view of the remotes).
func Origin(r *gate.Repo) string { return RepoName(r.OriginURL()) }

// RepoName returns owner/name for a remote URL on a GitHub host
// (github.com, or gh's GH_HOST) in any form gh reads (https, ssh, git, or
// scp-like git@github.com:owner/name), "" for anything else.
func RepoName(u string) string {
	if g, ok := repoOf(u); ok {
		return g.FullName()
	}
	return ""
}

// The grammar of GitHub's repository names and URLs, which resolve, pin and
// clone repositories with.

// hosts are the hosts gatehouse treats as GitHub: github.com and the
// Enterprise host gh is pointed at (GH_HOST), last.
func hosts() []string {
	hosts := []string{"github.com"}
	if h := strings.ToLower(os.Getenv("GH_HOST")); h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// readURL reads a remote URL as gh does (git.ParseURL and
// ghrepo.FromURL): scp-like user@host:owner/name, or ssh, git, http(s)
// URLs; the path must be exactly owner/name (".git" dropped), each a
// validName. The host is lowercased, "www." dropped; a web URL keeps its
// port (an Enterprise host on another port), an SSH one does not (that
// port is SSH's). Any host is read: hosts says which are GitHub.
func readURL(raw string) (host, owner, name string, ok bool) {
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
	if !validName(parts[0]) || !validName(name) {
		return "", "", "", false
	}
	return host, parts[0], name, true
}

// validName is an owner or repository name GitHub allows: letters,
// digits, '-', '_' and '.', and never one that reads as an option or, as a
// folder a clone makes, as a git folder in any spelling (.git, .GIT, .git.,
// git~1).
func validName(s string) bool {
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
