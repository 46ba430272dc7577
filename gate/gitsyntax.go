package gate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// Values are read with git's syntax, by git.
//
// git reads a boolean with rules of its own: true, yes and on in any letter
// case, a key with no value, and any non-zero integer, which may carry a
// k, m or g suffix and may be written in octal or hex (2, 1k, 0x1, 010 are
// all true). A parser of gatehouse's own that knew fewer spellings read
// extensions.worktreeConfig=2 as false while git read it as true: the
// per-worktree config, and the filter it defined, slipped past the gate.
// So the gate asks git: each value a rule depends on is handed back to git
// as a command-line config entry and read with `git config --type=bool`.
// Only the two spellings git itself writes, "true" and "false", and a key
// with no value are answered without a process; a table test holds those
// (and every other spelling) against real git.

// gitBool is how git reads one value as a boolean.
type gitBool struct {
	value bool
	ok    bool // git accepts the value as a boolean at all
}

// gitBools maps a raw value (as the listing gave it) to git's reading.
type gitBools map[string]gitBool

// read returns git's boolean reading of e. A value git was not asked about
// is not a boolean: the rules then fail closed.
func (b gitBools) read(e entry) (bool, bool) {
	if !e.hasValue {
		return true, true // git: a key with no value is true
	}
	switch e.value {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	r := b[e.value]
	return r.value, r.ok
}

// maxBoolProbes bounds the distinct values one decision asks git about;
// past it the rest stay unanswered, and so refused.
const maxBoolProbes = 256

// readBools asks git how it reads, as booleans, the values of entries whose
// rule depends on one. One git process for all of them; if git refuses one
// value (it stops at the first it cannot read), each is asked on its own,
// up to a small bound.
func (r *Repo) readBools(ctx context.Context, t trust.Trust, d *decision, entries []entry) (gitBools, error) {
	var values []string
	seen := map[string]bool{}
	for _, e := range entries {
		if !e.hasValue || e.value == "true" || e.value == "false" || seen[e.value] || !dependsOnBool(e.key) {
			continue
		}
		if len(values) == maxBoolProbes {
			break
		}
		seen[e.value] = true
		values = append(values, e.value)
	}
	out := gitBools{}
	if len(values) == 0 {
		return out, nil
	}
	got, err := r.probeBools(ctx, t, d, values)
	if err == nil {
		return got, nil
	}
	var ee *ExitError
	if !errors.As(err, &ee) {
		return nil, err
	}
	for i, v := range values {
		if i == 32 {
			break
		}
		one, err := r.probeBools(ctx, t, d, []string{v})
		if errors.As(err, &ee) {
			out[v] = gitBool{} // git does not read it as a boolean
			continue
		}
		if err != nil {
			return nil, err
		}
		out[v] = one[v]
	}
	return out, nil
}

// dependsOnBool reports whether a rule that matches key reads its value as
// a boolean.
func dependsOnBool(key string) bool {
	if r, ok := firstRule(readRefusals, key); ok {
		return r.Value == notFalse
	}
	r, ok := firstRule(allowlist, key)
	return ok && r.Value == boolValue
}

// probeBools hands values to git as command-line config entries under a
// random name (so no entry of the repository's own config can answer in
// their place; command-line entries are also read last) and reads them back
// with --type=bool.
func (r *Repo) probeBools(ctx context.Context, t trust.Trust, d *decision, values []string) (gitBools, error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	prefix := "gatehouse.probe" + hex.EncodeToString(nonce[:]) + "."
	c := call{sub: subConfig, opts: []string{"--null", "--type=bool", "--get-regexp", "^" + strings.ReplaceAll(prefix, ".", `\.`)}}
	for i, v := range values {
		c.config = append(c.config, Option{Key: fmt.Sprintf("%sv%d", prefix, i), Value: v})
	}
	res, err := r.run(ctx, t, d, c)
	if err != nil {
		return nil, err
	}
	answers := map[string]string{}
	for rec := range bytes.SplitSeq(res.stdout, []byte{0}) {
		k, v, ok := bytes.Cut(rec, []byte{'\n'})
		if ok {
			answers[string(k)] = string(v) // later (command-line) entries win
		}
	}
	out := gitBools{}
	for i, v := range values {
		switch answers[fmt.Sprintf("%sv%d", prefix, i)] {
		case "true":
			out[v] = gitBool{value: true, ok: true}
		case "false":
			out[v] = gitBool{value: false, ok: true}
		}
	}
	return out, nil
}
