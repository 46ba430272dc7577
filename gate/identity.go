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
	id := Identity{Origin: GitHubRepo(url("origin"))}
	for _, n := range names {
		if v := remotes[n].Options.Get("gh-resolved"); v != "" {
			if v == "base" {
				id.Base = GitHubRepo(url(n))
			} else if ownerName(v) {
				id.Base = v
			}
			break
		}
	}
	if id.Base == "" {
		id.Base = GitHubRepo(url("upstream"))
	}
	if id.Base == "" {
		id.Base = id.Origin
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

// GitHubRepo returns owner/name for a GitHub remote URL (https, ssh, or
// scp-like git@github.com:owner/name), "" for anything else.
func GitHubRepo(u string) string {
	var path string
	switch {
	case strings.HasPrefix(u, "https://github.com/"), strings.HasPrefix(u, "http://github.com/"),
		strings.HasPrefix(u, "ssh://git@github.com/"), strings.HasPrefix(u, "git://github.com/"):
		path = u[strings.Index(u, "github.com/")+len("github.com/"):]
	case strings.HasPrefix(u, "git@github.com:"):
		path = strings.TrimPrefix(u, "git@github.com:")
	default:
		return ""
	}
	path = strings.TrimSuffix(strings.TrimSuffix(path, "/"), ".git")
	if !ownerName(path) {
		return ""
	}
	return path
}

// ownerName reports whether s is a plain "owner/name".
func ownerName(s string) bool {
	owner, name, ok := strings.Cut(s, "/")
	return ok && owner != "" && name != "" && !strings.Contains(name, "/") &&
		!strings.ContainsAny(s, " \t\n\\:?#@") && !strings.HasPrefix(owner, "-") && name != "." && name != ".."
}
