package gate

import (
	"bytes"
	"context"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// subCheckAttr asks git which filter driver a file's attributes select,
// reading the attributes files (and core.attributesFile) as git itself
// does for that file. It runs no driver.
var subCheckAttr = sub{name: "check-attr", readOnly: true, timeout: 60 * time.Second, maxOut: 64 << 20}

// filtered returns, for the paths among paths whose attributes select a
// filter driver the closed decision d switched off, the driver's name. Such
// a file's work-tree bytes are what the driver's smudge wrote (an LFS
// file's real content) while the index holds what its clean made (the LFS
// pointer), so with the driver off a work-tree diff compares the two as if
// the file had changed, staging it would store the smudged bytes in place
// of the pointer, and restoring it would write the pointer over the file.
// Those reads and writes are refused or left out by name; reads from
// objects and the index (a staged diff, git.show, history) need no driver
// and are served. An open decision switches nothing off: nil.
//
// git reads the attributes files in the order of the direction it
// converts: the work tree's .gitattributes before the index's when it
// cleans (stage, diff), the index's first when it smudges (discard,
// checkout; attr.c, GIT_ATTR_CHECKIN and GIT_ATTR_CHECKOUT). check-attr
// asks the first way and --cached the index alone, so a file is filtered
// when either answer names a switched-off driver: a .gitattributes changed
// in the work tree let a discard write the pointer over a file whose
// committed attributes filter it.
func (r *Repo) filtered(ctx context.Context, t trust.Trust, d *decision, paths []string) (map[string]string, error) {
	if !t.Closed() || len(d.defined["filter"]) == 0 || len(paths) == 0 || r.filteredOffForTest {
		return nil, nil
	}
	out := map[string]string{}
	for _, opts := range [][]string{{"-z", "--stdin", "filter"}, {"--cached", "-z", "--stdin", "filter"}} {
		var in bytes.Buffer
		for _, p := range paths {
			in.WriteString(p)
			in.WriteByte(0)
		}
		res, err := r.run(ctx, t, d, call{sub: subCheckAttr, opts: opts, stdin: &in})
		if err != nil {
			return nil, gitFailure(res, err)
		}
		if res.truncated {
			return nil, ErrTooManyPaths
		}
		// "path\0filter\0value\0" per path.
		f := bytes.Split(res.stdout, []byte{0})
		for i := 0; i+2 < len(f); i += 3 {
			switch v := string(f[i+2]); v {
			case "unspecified", "unset", "set":
				// no driver named: git filters nothing
			default:
				if _, seen := out[string(f[i])]; !seen && d.defined["filter"][v] {
					out[string(f[i])] = v
				}
			}
		}
	}
	return out, nil
}

// refuseFiltered is the sentence for a file whose read or change needs a
// filter driver gatehouse does not run for a device.
func refuseFiltered(path, driver, verb string) error {
	return refusal.Errorf(ErrFiltered,
		"%s goes through the Git filter %q (Git LFS, for one), which gatehouse does not run for a phone, so it can't %s it here. Do it on the computer, or turn on Full access for remote devices there.",
		path, driver, verb)
}
