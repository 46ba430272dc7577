package gate

import (
	"bytes"
	"context"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// maxIgnoredList bounds git's list of ignored paths one search reads. With
// --directory a wholly ignored folder (node_modules/, build/) is one line,
// so only a checkout that ignores hundreds of thousands of single files
// comes near it.
const maxIgnoredList = 16 << 20

// subLsIgnored is ls-files for that list, with a search's own time bound.
var subLsIgnored = sub{name: "ls-files", readOnly: true, timeout: 20 * time.Second, maxOut: maxIgnoredList}

// ErrTooManyIgnored: the list did not fit its bound.
var ErrTooManyIgnored = refusal.New(refusal.Refused, "too many ignored files",
	"This checkout ignores too many files to leave them out of a search. Include ignored files to search everything.")

// Ignored asks git which untracked paths the checkout ignores (every
// .gitignore, .git/info/exclude and core.excludesFile, as git reads them),
// for a search that leaves them out. A tracked file is never in it, as git
// never ignores one. While a watcher covers the checkout, git's answer is
// kept between calls (listcache.go); the set returned is shared and must
// not be changed. (Not --no-empty-directory: with --ignored, git 2.39
// then drops an ignored file deep in a folder that is not itself ignored;
// an empty ignored folder listed is harmless.)
func (r *Repo) Ignored(ctx context.Context, t trust.Trust) (fsguard.Ignored, error) {
	d, err := r.decide(ctx, t, readGate, "search it")
	if err != nil {
		return nil, err
	}
	v, err := r.cachedList(ctx, t, d, listIgnored, func() (any, int, error) {
		return r.lsIgnored(ctx, t, d)
	})
	if err != nil {
		return nil, err
	}
	return v.(fsguard.Ignored), nil
}

// lsIgnored runs git's listing for Ignored, and says the memory it holds.
func (r *Repo) lsIgnored(ctx context.Context, t trust.Trust, d *decision) (fsguard.Ignored, int, error) {
	res, err := r.run(ctx, t, d, call{sub: subLsIgnored,
		opts: []string{"--others", "--ignored", "--exclude-standard", "--directory", "-z"}})
	if err != nil {
		return nil, 0, gitFailure(res, err)
	}
	if res.truncated {
		return nil, 0, ErrTooManyIgnored
	}
	ig := fsguard.Ignored{}
	size := 0
	for p := range bytes.SplitSeq(res.stdout, []byte{0}) {
		if len(p) > 0 {
			ig[string(p)] = struct{}{}
			size += len(p) + listEntryOverhead
		}
	}
	return ig, size, nil
}
