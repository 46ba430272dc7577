package gate

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gatehouse/gatehouse/fsguard"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// Identity names the GitHub repositories a checkout's config points at, as
// owner/name ("" when there is none).
type Identity struct {
	// Origin is remote.origin.url's repository: what a project is.
	Origin string `json:"origin,omitempty"`
	// Base is where a pull request goes, as gh resolves it: the remote
	// marked gh-resolved ("base" means its own URL, another value names
	// owner/name), then upstream, then origin.
	Base string `json:"base,omitempty"`
	// Push is where a push goes: origin, else the first remote by name,
	// preferring its last pushurl over its url, as git push does.
	Push string `json:"push,omitempty"`
	// BaseRepo and PushRepo are Base and Push with their host, for gh's
	// --repo and a fork's head.
	BaseRepo GHRepo `json:"-"`
	PushRepo GHRepo `json:"-"`
}

// maxConfigFile bounds the config file read for identity.
const maxConfigFile = 1 << 20

// Identity reads the repositories from the checkout's config file directly:
// no git process (it names a repository, it never decides anything the gate
// does), no [include] or [includeIf] followed, and a symlinked or oversized
// config ignored (seed Rounds 17, 20, 22, 23). go-git's parser is the right
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
	remotes := map[string]*format.Subsection{}
	var names []string
	for _, s := range cfg.Section("remote").Subsections {
		if _, dup := remotes[s.Name]; !dup {
			names = append(names, s.Name)
		}
		remotes[s.Name] = s
	}
	sort.Strings(names)
	url := func(name string) string {
		if s := remotes[name]; s != nil {
			return lastOf(s.Options.GetAll("url"))
		}
		return ""
	}
	repo := func(u string) GHRepo {
		g, _ := ghRepoOf(u)
		return g
	}
	id := Identity{Origin: GitHubRepo(url("origin"))}
	for _, n := range names {
		if v := remotes[n].Options.Get("gh-resolved"); v != "" {
			if v == "base" {
				id.BaseRepo = repo(url(n))
			} else if ownerName(v) {
				// owner/name on the host of the remote that names it
				owner, name, _ := strings.Cut(v, "/")
				host := "github.com"
				if g, ok := parseGitHubURL(url(n)); ok {
					host = g.Host
				}
				id.BaseRepo = GHRepo{Host: host, Owner: owner, Name: name}
			}
			break
		}
	}
	if id.BaseRepo.Name == "" {
		id.BaseRepo = repo(url("upstream"))
	}
	if id.BaseRepo.Name == "" {
		id.BaseRepo = repo(url("origin"))
	}
	if id.BaseRepo.Name != "" {
		id.Base = id.BaseRepo.FullName()
	}
	push := "origin"
	if remotes["origin"] == nil && len(names) > 0 {
		push = names[0]
	}
	if s := remotes[push]; s != nil {
		u := lastOf(s.Options.GetAll("pushurl"))
		if u == "" {
			u = url(push)
		}
		id.PushRepo = repo(u)
		id.Push = GitHubRepo(u)
	}
	return id
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
	g, ok := ghRepoOf(u)
	if !ok {
		return ""
	}
	return g.FullName()
}

// ownerName reports whether s is a plain "owner/name".
func ownerName(s string) bool {
	owner, name, ok := strings.Cut(s, "/")
	return ok && owner != "" && name != "" && !strings.Contains(name, "/") &&
		!strings.ContainsAny(s, " \t\n\\:?#@") && !strings.HasPrefix(owner, "-") && name != "." && name != ".."
}
