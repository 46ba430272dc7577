package gate

import (
	"bytes"
	"path/filepath"

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
	g, ok := ghRepoOf(u)
	if !ok {
		return ""
	}
	return g.FullName()
}
