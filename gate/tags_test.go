package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

func TestTagsListAndCreate(t *testing.T) {
	gittest.Home(t, "")
	dir := withFeature(t)
	r := open(t, dir)
	head, feature := rev(t, dir, "HEAD"), rev(t, dir, "feature")
	if tg, err := r.CreateTag(ctx, closed, TagOptions{Name: "v1"}); err != nil || tg.Target != head || tg.Annotated {
		t.Fatalf("lightweight: %+v %v", tg, err)
	}
	if got := strings.TrimSpace(git(t, dir, "cat-file", "-t", "refs/tags/v1")); got != "commit" {
		t.Fatalf("v1 is a %s, want a lightweight tag (a commit)", got)
	}
	tg, err := r.CreateTag(ctx, closed, TagOptions{Name: "v2", At: feature[:12], Message: "Release two\n\nwith notes\n"})
	if err != nil || tg.Target != feature || !tg.Annotated || tg.Subject != "Release two" {
		t.Fatalf("annotated: %+v %v", tg, err)
	}
	if got := strings.TrimSpace(git(t, dir, "cat-file", "-t", "refs/tags/v2")); got != "tag" {
		t.Fatalf("v2 is a %s, want a tag object", got)
	}
	if got := git(t, dir, "tag", "-l", "--format=%(contents)", "v2"); got != "Release two\n\nwith notes\n\n" {
		t.Fatalf("v2's message %q", got)
	}
	if rev(t, dir, "v2^{commit}") != feature {
		t.Fatal("v2 does not name feature's tip")
	}
	wantRefusal(t, func() error { _, err := r.CreateTag(ctx, closed, TagOptions{Name: "v1", Message: "again"}); return err }(),
		ErrTagExists, "A tag named v1 already exists")
	if rev(t, dir, "v1") != head {
		t.Fatal("a refused tag moved v1")
	}
	for _, o := range []TagOptions{{Name: "--force"}, {Name: "a b"}, {Name: "v3", At: "HEAD"}, {Name: "v3", Message: " \n"}, {Name: "v3", At: "abcdef12"}} {
		if _, err := r.CreateTag(ctx, closed, o); err == nil {
			t.Errorf("CreateTag(%+v) answered", o)
		}
	}
	list, err := r.Tags(ctx, closed)
	if err != nil || len(list.Tags) != 2 {
		t.Fatalf("%+v %v", list, err)
	}
	byName := map[string]Tag{}
	for _, tg := range list.Tags {
		byName[tg.Name] = tg
	}
	if v := byName["v2"]; !v.Annotated || v.Target != feature || v.Subject != "Release two" || v.Date == "" {
		t.Errorf("v2 listed as %+v", v)
	}
	if v := byName["v1"]; v.Annotated || v.Target != head || v.Subject != "first" || v.Date == "" {
		t.Errorf("v1 listed as %+v", v)
	}
}

// A tag name shaped like an option goes after --end-of-options even with
// the name check off: git reads it as a tag name and refuses it.
func TestTagNamesNeverBecomeOptions(t *testing.T) {
	gittest.Home(t, "")
	dir := withFeature(t)
	r := open(t, dir)
	tagCheckOffForTest.Store(true)
	t.Cleanup(func() { tagCheckOffForTest.Store(false) })
	for _, name := range []string{"-d", "--delete", "-f", "--list"} {
		_, _ = r.CreateTag(ctx, closed, TagOptions{Name: name})
	}
	if got := git(t, dir, "for-each-ref", "refs/tags"); got != "" {
		t.Fatalf("tags made: %s", got)
	}
}

// Signing runs gpg.program (or gpg.ssh.program, gpg.x509.program): named by
// the checkout's config, or the user's global one, it is a program a
// repository could choose. tag.gpgSign signs every tag, even one asked for
// as lightweight, and tag.forceSignAnnotated every one made with -m. For a
// closed gate both are forced off and --no-sign given: no signing program
// runs, and the tag is made unsigned. The checkout's own config naming a
// signing program is refused by the Change gate before git starts; the
// user's global config is not, so there the forced options hold alone.
func TestTagSigningNeverRunsForAPhone(t *testing.T) {
	annotated := func(r *Repo, tr trust.Trust) error {
		_, err := r.CreateTag(ctx, tr, TagOptions{Name: "v1", Message: "release"})
		return err
	}
	local := func(config ...string) func(t *testing.T, cmd string) string {
		return func(t *testing.T, cmd string) string {
			dir := withFeature(t)
			for i := 0; i < len(config); i += 2 {
				v := config[i+1]
				if v == "PROG" {
					v = cmd
				}
				git(t, dir, "config", "--local", config[i], v)
			}
			return dir
		}
	}
	runAttacks(t, []attack{
		{name: "tag.gpgSign with gpg.program", build: local("tag.gpgSign", "true", "gpg.program", "PROG"), op: annotated, want: ErrRefused},
		{name: "tag.gpgSign with gpg.ssh.program", build: local("tag.gpgSign", "true", "gpg.format", "ssh", "user.signingKey", "key::ssh-ed25519 AAAA", "gpg.ssh.program", "PROG"), op: annotated, want: ErrRefused},
		{name: "tag.gpgSign on a lightweight tag", build: local("tag.gpgSign", "true", "gpg.program", "PROG"),
			op: func(r *Repo, tr trust.Trust) error {
				_, err := r.CreateTag(ctx, tr, TagOptions{Name: "v1"})
				return err
			},
			plain: func(t *testing.T, dir string) { git(t, dir, "!", "tag", "-m", "x", "v1") }, want: ErrRefused},
		{name: "tag.forceSignAnnotated", build: local("tag.forceSignAnnotated", "true", "gpg.program", "PROG"), op: annotated,
			plain: func(t *testing.T, dir string) { git(t, dir, "!", "tag", "-m", "x", "v1") }, want: ErrRefused},
	})
	t.Run("global config", func(t *testing.T) {
		prog, marker := gittest.PayloadFile(t)
		gittest.Home(t, "[tag]\n\tgpgSign = true\n\tforceSignAnnotated = true\n[gpg]\n\tprogram = "+prog+"\n")
		dir := withFeature(t)
		git(t, dir, "!", "tag", "-m", "x", "plain")
		if !gittest.Fired(marker) {
			t.Fatal("not reproduced: plain git did not sign")
		}
		if err := os.Remove(marker); err != nil {
			t.Fatal(err)
		}
		if err := annotated(open(t, dir), closed); err != nil {
			t.Fatal(err)
		}
		if gittest.Fired(marker) {
			t.Fatal("the global signing program ran for a phone")
		}
		if got := git(t, dir, "cat-file", "tag", "v1"); strings.Contains(got, "SIGNATURE") {
			t.Fatalf("the tag is signed:\n%s", got)
		}
	})
}

// withTagRemote is a checkout whose origin is a bare repository served over
// git:// on loopback, with main pushed, a tag v1 to push and a tag private
// that must stay home.
func withTagRemote(t *testing.T) (dir, bare string) {
	base := t.TempDir()
	url := gittest.Daemon(t, base)
	dir = withFeature(t)
	bare = filepath.Join(base, "remote.git")
	git(t, "", "init", "-q", "--bare", bare)
	git(t, dir, "remote", "add", "origin", url+"remote.git")
	git(t, dir, "push", "-q", "origin", "main")
	git(t, dir, "branch", "-q", "--set-upstream-to=origin/main")
	git(t, dir, "tag", "-a", "-m", "one", "v1", "feature")
	git(t, dir, "tag", "private")
	return dir, bare
}

func TestPushTag(t *testing.T) {
	gittest.Home(t, "")
	dir, bare := withTagRemote(t)
	r := open(t, dir)
	if err := r.PushTag(ctx, closed, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := git(t, bare, "for-each-ref", "--format=%(refname)"); got != "refs/heads/main\nrefs/tags/v1\n" {
		t.Fatalf("the remote holds:\n%s", got)
	}
	if rev(t, bare, "v1") != rev(t, dir, "v1") {
		t.Fatal("the remote's v1 is not the tag object")
	}
	wantRefusal(t, r.PushTag(ctx, closed, "nope"), ErrUnknownRef, "no tag named nope")
	// A tag the remote has at another commit is refused, never moved.
	git(t, dir, "tag", "-d", "v1")
	git(t, dir, "tag", "v1", "main")
	wantRefusal(t, r.PushTag(ctx, closed, "v1"), ErrTagExists, "already has a tag named v1")
	if git(t, bare, "rev-parse", "v1^{commit}") != git(t, dir, "rev-parse", "feature") {
		t.Fatal("the remote's v1 moved")
	}
}

func TestPushTagHooks(t *testing.T) {
	hook := func(name string) func(t *testing.T, cmd string) string {
		return func(t *testing.T, cmd string) string {
			dir, _ := withTagRemote(t)
			if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", name), []byte("#!/bin/sh\nexec '"+cmd+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	push := func(r *Repo, tr trust.Trust) error { return r.PushTag(ctx, tr, "v1") }
	create := func(r *Repo, tr trust.Trust) error {
		_, err := r.CreateTag(ctx, tr, TagOptions{Name: "v9", Message: "nine"})
		return err
	}
	runAttacks(t, []attack{
		{name: "tag push runs pre-push", build: hook("pre-push"), op: push},
		{name: "tag create runs reference-transaction", build: hook("reference-transaction"), op: create},
	})
}
