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
// never ignores one. (Not --no-empty-directory: with --ignored, git 2.39
// then drops an ignored file deep in a folder that is not itself ignored;
// an empty ignored folder listed is harmless.)
func (r *Repo) Ignored(ctx context.Context, t trust.Trust) (fsguard.Ignored, error) {
	d, err := r.decide(ctx, t, readGate, "search it")
	if err != nil {
		return nil, err
	}
	res, err := r.run(ctx, t, d, call{sub: subLsIgnored,
		opts: []string{"--others", "--ignored", "--exclude-standard", "--directory", "-z"}})
	if err != nil {
		return nil, gitFailure(res, err)
	}
	if res.truncated {
		return nil, ErrTooManyIgnored
	}
	ig := fsguard.Ignored{}
	for p := range bytes.SplitSeq(res.stdout, []byte{0}) {
		if len(p) > 0 {
			ig[string(p)] = struct{}{}
		}
	}
	return ig, nil
}
