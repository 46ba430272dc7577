package gate

import (
	"bytes"
	"path/filepath"

	"github.com/gatehouse/gatehouse/fsguard"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// maxConfigFile bounds the config file read for the origin's URL.
const maxConfigFile = 1 << 20

// OriginURL is the checkout's remote.origin.url, the last one its config
// file gives as git config --get reads it ("" when there is none); package
// github reads it as a repository name (github.Origin). It is read from
// the config file directly: no git process (it names a repository, it never
// decides anything the gate does), no [include] or [includeIf] followed,
// and a symlinked or oversized config ignored
// (TestOriginURLIgnoresSymlinkedConfig; fsguard.ReadMetadata
// says why a metadata read refuses what it refuses). go-git's parser is the right
// tool here because nothing it decides opens a door.
func (r *Repo) OriginURL() string {
	data, err := fsguard.ReadMetadata(filepath.Join(r.commonDir, "config"), maxConfigFile)
	if err != nil {
		return ""
	}
	return originOf(data)
}

func originOf(data []byte) string {
	cfg := format.New()
	if err := format.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return ""
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
	return url
}

func lastOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}
