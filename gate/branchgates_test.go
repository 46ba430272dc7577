package gate

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// branchOps are the branch and tag changes, each on withFeature's checkout
// (feature two commits ahead of main, on main) given a remote-tracking
// origin/fresh and a tag v0.
var branchOps = []struct {
	name string
	op   func(r *Repo, tr trust.Trust) error
}{
	{"create", func(r *Repo, tr trust.Trust) error { _, err := r.CreateBranch(ctx, tr, "new", "", true); return err }},
	{"rename", func(r *Repo, tr trust.Trust) error { return r.RenameBranch(ctx, tr, "feature", "topic") }},
	{"delete", func(r *Repo, tr trust.Trust) error { _, err := r.DeleteBranch(ctx, tr, "feature", true); return err }},
	{"switch remote", func(r *Repo, tr trust.Trust) error { _, err := r.SwitchRemote(ctx, tr, "origin/fresh"); return err }},
	{"tag", func(r *Repo, tr trust.Trust) error {
		_, err := r.CreateTag(ctx, tr, TagOptions{Name: "v1", Message: "one"})
		return err
	}},
}

func withFeatureAndRemote(t *testing.T, config ...string) string {
	dir := withFeature(t)
	git(t, dir, "remote", "add", "origin", "https://example.invalid/app.git")
	git(t, dir, "update-ref", "refs/remotes/origin/fresh", "feature~1")
	git(t, dir, "tag", "v0")
	for i := 0; i+1 < len(config); i += 2 {
		git(t, dir, "config", "--local", config[i], config[i+1])
	}
	return dir
}

// Each change takes the checkout lock: while another change holds it, each
// is refused as busy and no ref moves; once it is free, each goes through.
func TestBranchChangesTakeTheCheckoutLock(t *testing.T) {
	gittest.Home(t, "")
	for _, o := range branchOps {
		t.Run(o.name, func(t *testing.T) {
			dir := withFeatureAndRemote(t)
			r := open(t, dir)
			before := git(t, dir, "for-each-ref")
			r.change.Lock()
			wantRefusal(t, o.op(r, closed), ErrBusy)
			r.change.Unlock()
			if after := git(t, dir, "for-each-ref"); after != before {
				t.Fatalf("a refused change moved refs:\n%s\nthen\n%s", before, after)
			}
			if err := o.op(r, closed); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Each change goes through the Change gate: in a checkout whose config
// names a program (core.fsmonitor), a closed phone is refused before git
// starts, the payload never runs and no ref moves; the desktop's call
// goes through.
func TestBranchChangesPassTheChangeGate(t *testing.T) {
	gittest.Home(t, "")
	for _, o := range branchOps {
		t.Run(o.name, func(t *testing.T) {
			prog, marker := gittest.PayloadFile(t)
			dir := withFeatureAndRemote(t, "core.fsmonitor", prog)
			before := git(t, dir, "for-each-ref")
			wantRefusal(t, o.op(open(t, dir), closed), ErrRefused, "core.fsmonitor")
			if gittest.Fired(marker) {
				t.Fatal("the checkout's program ran for a closed phone")
			}
			if after := git(t, dir, "for-each-ref"); after != before {
				t.Fatalf("a refused change moved refs:\n%s\nthen\n%s", before, after)
			}
			if err := o.op(open(t, dir), desktop); err != nil {
				t.Fatalf("the desktop: %v", err)
			}
		})
	}
}

// The forced options hold without the flags: with --no-sign and -a left
// off (tagSignFlagsOffForTest), a closed phone's tag in a home whose
// config signs every tag still runs no signing program, because
// tag.gpgSign and tag.forceSignAnnotated are forced off; plain git with
// the same config runs it.
func TestTagSigningOffWithoutTheFlags(t *testing.T) {
	prog, marker := gittest.PayloadFile(t)
	gittest.Home(t, "[tag]\n\tgpgSign = true\n\tforceSignAnnotated = true\n[gpg]\n\tprogram = "+prog+"\n")
	dir := withFeature(t)
	git(t, dir, "!", "tag", "-m", "x", "plain")
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: plain git did not sign")
	}
	prog2, marker2 := gittest.PayloadFile(t)
	gittest.Home(t, "[tag]\n\tgpgSign = true\n\tforceSignAnnotated = true\n[gpg]\n\tprogram = "+prog2+"\n")
	tagSignFlagsOffForTest.Store(true)
	t.Cleanup(func() { tagSignFlagsOffForTest.Store(false) })
	r := open(t, dir)
	for _, o := range []TagOptions{{Name: "light"}, {Name: "annotated", Message: "one"}} {
		if _, err := r.CreateTag(ctx, closed, o); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
	}
	if gittest.Fired(marker2) {
		t.Fatal("a signing program ran for a phone with only the forced options")
	}
	if got := git(t, dir, "cat-file", "tag", "annotated"); strings.Contains(got, "SIGNATURE") {
		t.Fatalf("signed:\n%s", got)
	}
}
