package gate

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// subTag makes one tag. Its names come after --end-of-options; the message
// of an annotated tag is read from stdin (-F -), never from the command
// line. --no-sign is given wherever a tag is made without a signature: it
// outranks tag.gpgSign, but not tag.forceSignAnnotated, which the closed
// gate forces off (forced.go) and which never applies to -a.
var subTag = sub{name: "tag", endOfOptions: true, timeout: 30 * time.Second, maxOut: 1 << 20}

// Refusals of tags.
var (
	ErrTagExists = refusal.New(refusal.Conflict, "tag exists",
		"A tag with this name already exists. Choose another name; gatehouse never moves a tag.")
	ErrBadTag = refusal.New(refusal.BadParams, "invalid tag name",
		"This is not a valid tag name.")
	ErrTagMessage = refusal.New(refusal.BadParams, "bad tag message",
		"Write the tag's message (at most 64 KiB), or make a lightweight tag.")
)

// maxTags bounds the tags one listing gathers (the device pages through
// them).
const maxTags = 100_000

// Tag is one tag: the commit it names, whether it is an annotated tag object
// (with its own message, tagger and date) or a lightweight one (a name for a
// commit, whose subject and date are the commit's).
type Tag struct {
	Name      string `json:"name"`
	Target    string `json:"target"` // the commit (or other object) it names, peeled
	Annotated bool   `json:"annotated,omitempty"`
	Subject   string `json:"subject"`
	Date      string `json:"date"` // ISO 8601: the tagger's, or the commit's
}

// Tags lists tags, newest first.
type Tags struct {
	Tags      []Tag `json:"tags"`
	Truncated bool  `json:"truncated,omitempty"`
	Next      int   `json:"next,omitempty"`
}

// tagFormat is one tag per line, fields ended by NUL. A subject is one line
// (git joins a message's first paragraph), so a newline cannot forge a
// record; a NUL in a message ends git's reading of it.
const tagFormat = "--format=%(refname)%00%(objecttype)%00%(objectname)%00%(*objectname)%00%(creatordate:iso-strict)%00%(contents:subject)"

// Tags reads the tag list, newest first.
func (r *Repo) Tags(ctx context.Context, t trust.Trust) (*Tags, error) {
	d, err := r.decide(ctx, t, readGate, "see its tags")
	if err != nil {
		return nil, err
	}
	res, err := r.run(ctx, t, d, call{sub: subForEachRef, opts: []string{"--sort=-creatordate", tagFormat, "refs/tags"}})
	if err != nil {
		return nil, err
	}
	out := &Tags{Tags: []Tag{}, Truncated: res.truncated}
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 6 {
			continue
		}
		name, ok := strings.CutPrefix(f[0], "refs/tags/")
		if !ok || !fullOID(f[2]) {
			continue
		}
		if len(out.Tags) >= maxTags {
			out.Truncated = true
			break
		}
		tg := Tag{Name: clipUTF8(name, maxRefName), Target: f[2], Annotated: f[1] == "tag", Subject: clipUTF8(f[5], 300), Date: f[4]}
		if tg.Annotated && fullOID(f[3]) {
			tg.Target = f[3]
		}
		out.Tags = append(out.Tags, tg)
	}
	return out, nil
}

// TagOptions make one tag.
type TagOptions struct {
	Name    string
	At      string // a commit id the device saw; HEAD when ""
	Message string // "" for a lightweight tag
}

// CreateTag makes a tag at HEAD or a commit id: lightweight, or annotated
// with a message. An existing name is refused, never moved (no -f). No
// signing program runs for a closed gate: tag.gpgSign and
// tag.forceSignAnnotated are forced off, and --no-sign is given; for the
// desktop an annotated tag signs as its own config says.
func (r *Repo) CreateTag(ctx context.Context, t trust.Trust, o TagOptions) (*Tag, error) {
	if !ValidBranch(o.Name) && !tagCheckOffForTest.Load() {
		return nil, ErrBadTag
	}
	if o.At != "" && !ValidOID(o.At) {
		return nil, ErrBadOID
	}
	if len(o.Message) > MaxMessage || !utf8.ValidString(o.Message) || strings.ContainsRune(o.Message, 0) ||
		o.Message != "" && strings.TrimSpace(o.Message) == "" {
		return nil, ErrTagMessage
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "make a tag")
	if err != nil {
		return nil, err
	}
	if _, ok, err := r.tagRef(ctx, t, d, o.Name); err != nil {
		return nil, err
	} else if ok {
		return nil, refusal.Errorf(ErrTagExists, "A tag named %s already exists. Choose another name; gatehouse never moves a tag.", o.Name)
	}
	oid, err := r.startPoint(ctx, t, d, o.At)
	if err != nil {
		return nil, err
	}
	c := call{sub: subTag, args: []string{o.Name, oid}}
	flagsOff := tagSignFlagsOffForTest.Load()
	if o.Message == "" {
		if !flagsOff {
			c.opts = []string{"--no-sign"}
		}
	} else {
		c.opts = []string{"-F", "-", "--cleanup=strip"}
		if !flagsOff {
			c.opts = append(c.opts, "-a")
			if t.Closed() {
				c.opts = append(c.opts, "--no-sign")
			}
		}
		c.stdin = strings.NewReader(o.Message)
	}
	if res, err := r.run(ctx, t, d, c); err != nil {
		return nil, gitFailure(res, err)
	}
	tg := &Tag{Name: o.Name, Target: oid, Annotated: o.Message != ""}
	if tg.Annotated {
		tg.Subject, _, _ = strings.Cut(strings.TrimSpace(o.Message), "\n")
		tg.Subject = clipUTF8(tg.Subject, 300)
	}
	return tg, nil
}

// tagCheckOffForTest takes a device's tag name without ValidBranch, so a
// test shows git reading it as a name after --end-of-options. Only this
// package's tests set it.
var tagCheckOffForTest atomic.Bool

// tagSignFlagsOffForTest leaves -a and --no-sign off a tag, so a test shows
// the forced tag.gpgSign and tag.forceSignAnnotated holding alone. Only
// this package's tests set it.
var tagSignFlagsOffForTest atomic.Bool

// tagRef looks a tag up by its exact name.
func (r *Repo) tagRef(ctx context.Context, t trust.Trust, d *decision, name string) (string, bool, error) {
	ref := "refs/tags/" + name
	res, err := r.run(ctx, t, d, call{sub: subForEachRef, opts: []string{"--format=%(refname)%00%(objectname)"}, args: []string{ref}})
	if err != nil {
		return "", false, err
	}
	for line := range strings.SplitSeq(string(res.stdout), "\n") {
		if n, oid, _ := strings.Cut(line, "\x00"); n == ref && fullOID(oid) {
			return oid, true, nil
		}
	}
	return "", false, nil
}

// PushTag pushes exactly one tag, refs/tags/NAME to refs/tags/NAME (no '+':
// never forced), to the remote the current branch pushes to, else origin
// (else the first remote by name). It goes through git.push's pinned call
// (pushDest.call): no mirror, no followed tags, no server options, no
// submodules, and for a closed gate the pinned transports and no pre-push
// hook.
func (r *Repo) PushTag(ctx context.Context, t trust.Trust, name string) error {
	if !ValidBranch(name) {
		return ErrBadTag
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	d, err := r.decide(ctx, t, changeGate, "push a tag")
	if err != nil {
		return err
	}
	if _, ok, err := r.tagRef(ctx, t, d, name); err != nil {
		return err
	} else if !ok {
		return refusal.Errorf(ErrUnknownRef, "There is no tag named %s here.", name)
	}
	st, err := r.status(ctx, t, d)
	if err != nil {
		return err
	}
	var dest pushDest
	if st.Branch != "" {
		if dest, err = r.pushDest(ctx, t, d, st); err != nil {
			return err
		}
	} else if dest.remote, err = r.defaultRemote(ctx, t, d); err != nil {
		return err
	}
	ref := "refs/tags/" + name
	dest.src, dest.dst, dest.setUpstream = ref, ref, false
	res, err := r.run(ctx, t, d, dest.call(t))
	if err != nil && res != nil && strings.Contains(string(res.stdout), "[rejected] (already exists)") {
		return errors.Join(refusal.Errorf(ErrTagExists, "The remote already has a tag named %s at another commit; gatehouse never moves a tag.", name), err)
	}
	return gitFailure(res, err)
}
