package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// pushFixture is a checkout whose origin is a bare repository served over
// git:// (a transport the closed gate allows), with main one commit ahead
// of its upstream, a private branch never pushed, a lightweight tag and an
// annotated one on main, and config entries that widen a plain git push.
type pushFixture struct {
	dir, bare string
}

func newPushFixture(t *testing.T, config ...string) pushFixture {
	t.Helper()
	base := t.TempDir()
	url := gittest.Daemon(t, base)
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	bare := filepath.Join(base, "remote.git")
	git(t, "", "clone", "-q", "--bare", dir, bare)
	git(t, dir, "remote", "add", "origin", url+"remote.git")
	git(t, dir, "fetch", "-q", "origin")
	git(t, dir, "branch", "-q", "--set-upstream-to=origin/main")
	write(t, dir, map[string]string{"a.txt": "ahead\n"})
	git(t, dir, "commit", "-qam", "ahead")
	git(t, dir, "switch", "-q", "-c", "private")
	write(t, dir, map[string]string{"private.txt": "not for the remote\n"})
	git(t, dir, "add", "private.txt")
	git(t, dir, "commit", "-qm", "private")
	git(t, dir, "switch", "-q", "main")
	git(t, dir, "tag", "light")
	git(t, dir, "tag", "-a", "-m", "release", "v1")
	for i := 0; i+1 < len(config); i += 2 {
		git(t, dir, "config", "--local", "--add", config[i], config[i+1])
	}
	return pushFixture{dir: dir, bare: bare}
}

// refs is the bare repository's refs as git ls-remote lists them.
func (f pushFixture) refs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(git(t, "", "ls-remote", f.bare)), "\n") {
		if oid, name, ok := strings.Cut(line, "\t"); ok && name != "HEAD" {
			out[name] = oid
		}
	}
	return out
}

// refsChanged lists the refs whose value differs between before and after.
func refsChanged(before, after map[string]string) []string {
	var out []string
	for name := range after {
		if before[name] != after[name] {
			out = append(out, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// oldPush is the call Push made before it named the ref: a plain git push
// to where the config says.
var oldPush = call{sub: subPush, opts: []string{"--porcelain", "--no-recurse-submodules", "--no-verify"}}

// The black-box attack: with an allowlisted remote.origin.mirror or
// remote.origin.push, pushing main from the phone sent every branch and tag,
// the never-pushed private branch among them. The old call, through the
// same runner and gate, sends them; Push sends main and nothing else, to
// main.
func TestPushSendsOnlyTheCurrentBranch(t *testing.T) {
	for _, c := range []struct {
		name   string
		trust  trust.Trust
		config []string
		leaked []string // what the old push sent besides main
	}{
		{"mirror", closed, []string{"remote.origin.mirror", "true"},
			[]string{"refs/heads/private", "refs/tags/light", "refs/tags/v1"}},
		{"push refspecs", closed, []string{"remote.origin.push", "refs/heads/*:refs/heads/*", "remote.origin.push", "refs/tags/*:refs/tags/*"},
			[]string{"refs/heads/private", "refs/tags/light", "refs/tags/v1"}},
		{"mirror and a push refspec", closed, []string{"remote.origin.mirror", "true", "remote.origin.push", "+refs/heads/*:refs/heads/*"},
			[]string{"refs/heads/private"}},
		// Keys the allowlist refuses, so with the switch on only.
		{"follow tags, matching", phoneOn, []string{"push.followTags", "true", "push.default", "matching"},
			[]string{"refs/tags/v1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gittest.Home(t, "")
			old := newPushFixture(t, c.config...)
			before := old.refs(t)
			r := open(t, old.dir)
			d, err := r.decide(ctx, c.trust, changeGate, "push")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.run(ctx, c.trust, d, oldPush); err != nil {
				t.Fatalf("the old push: %v", err)
			}
			got := refsChanged(before, old.refs(t))
			for _, ref := range c.leaked {
				if !slices.Contains(got, ref) {
					t.Fatalf("not reproduced: the old push changed %q, not %s", got, ref)
				}
			}
			t.Logf("the old push changed %q", got)

			f := newPushFixture(t, c.config...)
			before = f.refs(t)
			if err := open(t, f.dir).Push(ctx, c.trust); err != nil {
				t.Fatal(err)
			}
			after := f.refs(t)
			if got := refsChanged(before, after); !slices.Equal(got, []string{"refs/heads/main"}) {
				t.Fatalf("the push changed %q, want refs/heads/main alone", got)
			}
			if head := strings.TrimSpace(git(t, f.dir, "rev-parse", "main")); after["refs/heads/main"] != head {
				t.Fatalf("remote main %s, local main %s", after["refs/heads/main"], head)
			}
		})
	}
}

// push.pushOption sends options the phone never gave to the server (which
// may start its CI or open a merge request on them); Push clears them.
func TestPushSendsNoConfiguredPushOptions(t *testing.T) {
	gittest.Home(t, "")
	seen := filepath.Join(t.TempDir(), "options")
	setup := func() pushFixture {
		f := newPushFixture(t, "push.pushOption", "ci.skip", "push.pushOption", "merge_request.create")
		git(t, f.bare, "config", "receive.advertisePushOptions", "true")
		hook := "#!/bin/sh\necho \"${GIT_PUSH_OPTION_COUNT:-none} $GIT_PUSH_OPTION_0 $GIT_PUSH_OPTION_1\" >>'" + seen + "'\n"
		if err := os.WriteFile(filepath.Join(f.bare, "hooks", "post-receive"), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
		return f
	}
	old := setup()
	r := open(t, old.dir)
	if _, err := r.run(ctx, phoneOn, openDecision, oldPush); err != nil {
		t.Fatal(err)
	}
	if got := read(t, seen); got != "2 ci.skip merge_request.create\n" {
		t.Fatalf("not reproduced: the server saw %q", got)
	}
	if err := os.Remove(seen); err != nil {
		t.Fatal(err)
	}
	if err := open(t, setup().dir).Push(ctx, phoneOn); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(read(t, seen)); len(got) != 1 || got[0] != "0" && got[0] != "none" {
		t.Fatalf("the server saw push options %q", got)
	}
}

// A branch with no upstream goes to origin under its own name and gets
// origin as its upstream. With a mirror remote the old call, a refspec,
// failed outright; now it sends that branch alone.
func TestPushSetsTheUpstreamOfANewBranch(t *testing.T) {
	gittest.Home(t, "")
	f := newPushFixture(t, "remote.origin.mirror", "true")
	git(t, f.dir, "switch", "-q", "-c", "feature")
	write(t, f.dir, map[string]string{"f.txt": "f\n"})
	git(t, f.dir, "add", "f.txt")
	git(t, f.dir, "commit", "-qm", "feature")
	r := open(t, f.dir)
	d, err := r.decide(ctx, closed, changeGate, "push")
	if err != nil {
		t.Fatal(err)
	}
	oldNew := oldPush
	oldNew.opts = append(slices.Clone(oldNew.opts), "--set-upstream")
	oldNew.args = []string{"origin", "HEAD"}
	if _, err := r.run(ctx, closed, d, oldNew); err == nil || !strings.Contains(err.Error(), "--mirror can't be combined with refspecs") {
		t.Fatalf("not reproduced: the old push of a new branch gave %v", err)
	}
	before := f.refs(t)
	if err := r.Push(ctx, closed); err != nil {
		t.Fatal(err)
	}
	if got := refsChanged(before, f.refs(t)); !slices.Equal(got, []string{"refs/heads/feature"}) {
		t.Fatalf("the push changed %q, want refs/heads/feature alone", got)
	}
	if up := strings.TrimSpace(git(t, f.dir, "rev-parse", "--abbrev-ref", "feature@{upstream}")); up != "origin/feature" {
		t.Fatalf("upstream %q", up)
	}
}

// A branch whose upstream has another name is pushed to that upstream; one
// whose pushRemote names another remote (a fork) goes there, under its own
// name, as git push would send it.
func TestPushGoesWhereGitWouldPushTheBranch(t *testing.T) {
	gittest.Home(t, "")
	f := newPushFixture(t)
	git(t, f.dir, "switch", "-q", "-c", "topic", "--track", "origin/main")
	write(t, f.dir, map[string]string{"t.txt": "t\n"})
	git(t, f.dir, "add", "t.txt")
	git(t, f.dir, "commit", "-qm", "topic")
	before := f.refs(t)
	if err := open(t, f.dir).Push(ctx, closed); err != nil {
		t.Fatal(err)
	}
	after := f.refs(t)
	if got := refsChanged(before, after); !slices.Equal(got, []string{"refs/heads/main"}) || after["refs/heads/main"] != strings.TrimSpace(git(t, f.dir, "rev-parse", "topic")) {
		t.Fatalf("the push changed %q, want main updated to topic", got)
	}

	fork := t.TempDir()
	forkURL := gittest.Daemon(t, fork)
	git(t, "", "init", "-q", "--bare", filepath.Join(fork, "fork.git"))
	git(t, f.dir, "remote", "add", "fork", forkURL+"fork.git")
	git(t, f.dir, "config", "branch.topic.pushRemote", "fork")
	write(t, f.dir, map[string]string{"t.txt": "t2\n"})
	git(t, f.dir, "commit", "-qam", "topic 2")
	if err := open(t, f.dir).Push(ctx, closed); err != nil {
		t.Fatal(err)
	}
	if got := refsChanged(after, f.refs(t)); len(got) != 0 {
		t.Fatalf("origin changed %q", got)
	}
	out := strings.Fields(git(t, "", "ls-remote", filepath.Join(fork, "fork.git")))
	if !slices.Equal(out, []string{strings.TrimSpace(git(t, f.dir, "rev-parse", "topic")), "refs/heads/topic"}) {
		t.Fatalf("the fork holds %q", out)
	}
}

// A commit whose push is rejected (the remote moved) says it was made: the
// refusal alone read as if nothing had happened, while the branch was one
// commit further ahead.
func TestCommitAndPushRejectedSaysItCommitted(t *testing.T) {
	gittest.Home(t, "")
	f := newPushFixture(t)
	other := filepath.Join(t.TempDir(), "other")
	git(t, "", "clone", "-q", f.bare, other)
	write(t, other, map[string]string{"b.txt": "moved\n"})
	git(t, other, "add", "b.txt")
	git(t, other, "commit", "-qm", "the remote moves")
	git(t, other, "push", "-q", "origin", "HEAD:main")
	write(t, f.dir, map[string]string{"a.txt": "from the phone\n"})
	git(t, f.dir, "add", "a.txt")
	res, err := open(t, f.dir).Commit(ctx, closed, "from the phone", true)
	if !errors.Is(err, ErrPushRejected) {
		t.Fatalf("commit and push onto a moved remote: %v", err)
	}
	head := strings.TrimSpace(git(t, f.dir, "rev-parse", "HEAD"))
	if res == nil || res.OID != head || res.Pushed {
		t.Fatalf("result %+v, HEAD %s", res, head)
	}
	if s := refusal.Sentence(err); !strings.HasPrefix(s, "Committed "+head[:8]+", but the push did not go through: ") || !strings.Contains(s, refusal.Sentence(ErrPushRejected)) {
		t.Fatalf("the device reads %q", s)
	}
}
