package gate

import (
	"context"

	"github.com/gatehouse/gatehouse/trust"
)

// ConfigEntry is one entry of a repository's own config, as git lists it.
type ConfigEntry struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

// LocalConfig lists the local config's entries through git itself (never a
// parser of gatehouse's own), for the audit: a token stored in the config
// (an Authorization extraheader, a password in a remote URL) is a finding
// of its own even where the gate lets the key through. For a closed t the
// listing runs with no overrides, as the gate's own listing does: listing
// runs no program. A git folder whose shape the gate refuses is not listed
// (git would read the config through whatever it holds): it returns nil.
func (r *Repo) LocalConfig(ctx context.Context, t trust.Trust) ([]ConfigEntry, error) {
	if t.Closed() {
		if err := r.checkLayout("use Git on this checkout"); err != nil {
			return nil, nil
		}
	}
	entries, _, err := r.listConfig(ctx, t, &decision{}, "--local")
	if err != nil {
		return nil, err
	}
	out := make([]ConfigEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, ConfigEntry{Key: e.key, Value: e.value})
	}
	return out, nil
}
