package github

import (
	"context"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

var (
	// ErrNoRemote: the checkout has no remote on a GitHub host, so there is
	// no repository to name.
	ErrNoRemote = refusal.New(refusal.Refused, "no github remote",
		"This project has no GitHub remote.")
	ErrBadRepoName = refusal.New(refusal.BadParams, "bad repository name",
		"Name a GitHub repository as owner/name.")
)

// Repo is a repository on a GitHub host, as gh's --repo names it.
type Repo struct {
	Host  string `json:"host"`
	Owner string `json:"owner"`
	Name  string `json:"name"`
}

// String is gh's HOST/OWNER/NAME.
func (g Repo) String() string { return g.Host + "/" + g.Owner + "/" + g.Name }

// FullName is OWNER/NAME.
func (g Repo) FullName() string { return g.Owner + "/" + g.Name }

// parseURL reads a remote URL on any host as gh does (readURL).
func parseURL(u string) (Repo, bool) {
	host, owner, name, ok := readURL(u)
	return Repo{Host: host, Owner: owner, Name: name}, ok
}

// repoOf reads a remote URL as a repository on a GitHub host.
func repoOf(u string) (Repo, bool) {
	g, ok := parseURL(u)
	return g, ok && onGitHubHost(g.Host)
}

func onGitHubHost(host string) bool { return slices.Contains(hosts(), host) }

// ParseRepoName reads "owner/name" (or "host/owner/name" on a GitHub
// host) as gh's repository names.
func ParseRepoName(s string) (Repo, error) {
	parts := strings.Split(s, "/")
	hosts := hosts()
	host := hosts[len(hosts)-1] // GH_HOST when set, else github.com
	if len(parts) == 3 {
		host, parts = strings.ToLower(parts[0]), parts[1:]
	}
	if len(parts) != 2 || !validName(parts[0]) || !validName(parts[1]) || !onGitHubHost(host) {
		return Repo{}, ErrBadRepoName
	}
	return Repo{Host: host, Owner: parts[0], Name: parts[1]}, nil
}

// remoteScore orders remotes as gh does when none is marked: upstream,
// then github, then origin, then the rest in git's order.
func remoteScore(name string) int {
	switch name {
	case "upstream":
		return 3
	case "github":
		return 2
	case "origin":
		return 1
	}
	return 0
}

// resolve picks the base repository as gh does, from git's own view of the
// remotes (gate.GH.Remotes): the remote marked gh-resolved ("base", or an
// owner/name it names), else the first GitHub remote by gh's order. push is
// origin's repository when it is on the same host (a fork's), else the
// base.
func resolve(remotes []gate.Remote, marks []gate.RemoteMark) (base, push Repo, err error) {
	for _, m := range marks {
		for _, rm := range remotes {
			if rm.Name != m.Remote {
				continue
			}
			g, ok := parseURL(rm.URL)
			if !ok {
				continue
			}
			if m.Value != "base" {
				owner, repo, found := strings.Cut(m.Value, "/")
				if !found || !validName(owner) || !validName(repo) {
					continue
				}
				g.Owner, g.Name = owner, repo
			}
			base = g
		}
		if base.Name != "" {
			break
		}
	}
	if base.Name == "" {
		slices.SortStableFunc(remotes, func(a, b gate.Remote) int { return remoteScore(b.Name) - remoteScore(a.Name) })
		for _, rm := range remotes {
			if g, ok := repoOf(rm.URL); ok {
				base = g
				break
			}
		}
	}
	if base.Name == "" || !onGitHubHost(base.Host) {
		return Repo{}, Repo{}, ErrNoRemote
	}
	push = base
	for _, rm := range remotes {
		if p, ok := parseURL(rm.URL); ok && rm.Name == "origin" && p.Host == base.Host {
			push = p
		}
	}
	return base, push, nil
}

// start is every GitHub call's first step: the gate's decision (the
// Change gate with change; a checkout whose config would make gh's git run
// a program is refused for a closed caller, as for git), then the
// repository the call names, as gh resolves it (resolve), and the push
// remote's.
func start(ctx context.Context, r *gate.Repo, t trust.Trust, change bool, action string) (*gate.GH, Repo, Repo, error) {
	gh, err := r.GH(ctx, t, change, action)
	if err != nil {
		return nil, Repo{}, Repo{}, err
	}
	remotes, marks, err := gh.Remotes(ctx)
	if err != nil {
		return nil, Repo{}, Repo{}, err
	}
	base, push, err := resolve(remotes, marks)
	return gh, base, push, err
}

// ofRepo says whether a GitHub address is of the repository g: its web
// address followed by "/".
func ofRepo(u string, g Repo) bool {
	return strings.HasPrefix(strings.ToLower(u), strings.ToLower("https://"+g.Host+"/"+g.Owner+"/"+g.Name+"/"))
}
