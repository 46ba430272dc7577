package gate

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// ErrNotTracked is a path git holds no blob for (in the index, or in HEAD
// for a bare repository).
var ErrNotTracked = errors.New("gate: no tracked blob at this path")

// MaxBlobRead bounds ReadTrackedBlob: what the audit needs is a file's
// first lines (a PEM header, a JSON key's type), never a whole object.
const MaxBlobRead = 1 << 20

// subCatFile prints one object's bytes. Its maxOut is replaced per call by
// the caller's bound, so a huge blob stops git at the bound.
var subCatFile = sub{name: "cat-file", endOfOptions: true, readOnly: true, timeout: 30 * time.Second, maxOut: MaxBlobRead}

// ReadTrackedBlob returns at most max bytes of the blob git holds for path:
// the index's version (stage 0) in a checkout, HEAD's in a bare repository.
// It reads the object, not the work tree, with `git cat-file blob`, which
// applies no filter or textconv; truncated says the blob was longer.
//
// It is for the audit, which tells a public key from a private one by
// content; the serving path never calls it (a phone's reads go through
// fsguard and the secret rules by name). A closed t goes through the Read
// gate like any read: a checkout whose config the gate refuses (a partial
// clone would fetch a missing object on a git without GIT_NO_LAZY_FETCH)
// is refused here too.
func (r *Repo) ReadTrackedBlob(ctx context.Context, t trust.Trust, path string, max int) (data []byte, truncated bool, err error) {
	if max <= 0 || max > MaxBlobRead {
		max = MaxBlobRead
	}
	if path == "" || strings.ContainsRune(path, 0) || strings.HasPrefix(path, "/") {
		return nil, false, ErrNotTracked
	}
	d, err := r.decide(ctx, t, readGate, "read this file")
	if err != nil {
		return nil, false, err
	}
	// ":0:" names stage 0 explicitly, so a path that itself starts with
	// "1:" is not read as a stage number.
	spec := ":0:" + path
	if r.workTree == "" {
		spec = "HEAD:" + path
	}
	s := subCatFile
	s.maxOut = max
	res, err := r.run(ctx, t, d, call{sub: s, args: []string{"blob", spec}})
	var ee *ExitError
	if errors.As(err, &ee) {
		return nil, false, ErrNotTracked // no such object, or not a blob (a submodule's commit)
	}
	if err != nil {
		return nil, false, err
	}
	return res.stdout, res.truncated, nil
}
