package methods_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
)

// cloneHost serves no checkout yet, with the switch on and a clones folder,
// and a gh stand-in whose repo clone clones src into the folder it is given.
func cloneHost(t *testing.T) (*rpc.Host, string) {
	t.Helper()
	src := gittest.Init(t, map[string]string{"README.md": "# app\n"})
	gh := filepath.Join(t.TempDir(), "gh")
	script := "#!/bin/sh\n[ \"$1 $2\" = 'repo clone' ] || { echo \"unexpected: $*\" >&2; exit 2; }\n" +
		"env -u GIT_ALLOW_PROTOCOL git -c protocol.file.allow=always clone -q '" + src + "' \"$4\"\n"
	if err := os.WriteFile(gh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	clones := filepath.Join(t.TempDir(), "clones")
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		t.Fatal(err)
	}
	targets := rpc.NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{GH: gh})
	var on atomic.Bool
	on.Store(true)
	h := rpc.NewHost(rpc.HostOptions{Registry: reg, Targets: targets, Grants: fullDevices{}, FullAccess: on.Load, ClonesDir: clones})
	t.Cleanup(func() { h.Close(); targets.Close() })
	return h, clones
}

var cloner = rpc.Device{ID: "phone-clone", Fingerprint: "0123456789abcdef0123456789abcdef"}

// cloneDone clones repo over the protocol and waits for it to finish.
func cloneDone(t *testing.T, h *rpc.Host, repo string) (target, name string) {
	t.Helper()
	r := callAs(h, cloner, "projects.clone", map[string]string{"repo": repo})
	if !r.OK {
		t.Fatalf("clone %s: %s %s", repo, r.Code, r.Error)
	}
	var job struct{ ID string }
	mustUnmarshal(t, r.Result, &job)
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var st struct{ State, Target, Name, Error string }
		mustUnmarshal(t, callAs(h, cloner, "projects.cloneStatus", map[string]string{"id": job.ID}).Result, &st)
		switch {
		case st.State == "done":
			return st.Target, st.Name
		case st.State != "running":
			t.Fatalf("clone %s ended %+v", repo, st)
		case time.Now().After(end):
			t.Fatalf("clone %s never finished", repo)
		}
	}
}

// Found by a black-box attack: a clone of owner/app.worktrees beside a
// clone of owner/app took the folder where app's worktrees go, so app's
// next worktree would be made inside another served checkout. With the
// check off the clone lands exactly there (and the gate's second wall then
// refuses the worktree); with it, the clone is refused with a sentence,
// whatever the case of the name, and makes no folder.
func TestCloneNeverTakesAWorktreesFolder(t *testing.T) {
	gittest.Home(t, "")
	h, clones := cloneHost(t)
	app, _ := cloneDone(t, h, "octo/app")
	appTarget, _ := h.Targets().Get(app)
	worktrees := filepath.Join(filepath.Dir(appTarget.Root.Path()), "app.worktrees")

	methods.WorktreesNameCheckOffForTest.Store(true)
	t.Cleanup(func() { methods.WorktreesNameCheckOffForTest.Store(false) })
	other, name := cloneDone(t, h, "octo/app.worktrees")
	otherTarget, _ := h.Targets().Get(other)
	if name != "app.worktrees" || otherTarget.Root.Path() != worktrees {
		t.Fatalf("not reproduced: the clone is %s at %s, app's worktrees go to %s", name, otherTarget.Root.Path(), worktrees)
	}
	r := callAs(h, cloner, "worktree.create", map[string]string{"target": app, "branch": "feature"})
	if r.OK || !strings.Contains(r.Error, "The folder app.worktrees beside this checkout, where gatehouse puts its worktrees, is another checkout") {
		t.Fatalf("a worktree inside the served clone: %+v", r)
	}
	if _, err := os.Lstat(filepath.Join(worktrees, "feature")); !os.IsNotExist(err) {
		t.Fatalf("something was made inside the clone: %v", err)
	}

	methods.WorktreesNameCheckOffForTest.Store(false)
	for _, repo := range []string{"octo/lib.worktrees", "octo/Lib.WorkTrees"} {
		r := callAs(h, cloner, "projects.clone", map[string]string{"repo": repo})
		if r.OK || r.Code != rpc.CodeRefused || !strings.Contains(r.Error, "won't clone a repository whose name ends in .worktrees") {
			t.Fatalf("clone %s: %+v", repo, r)
		}
	}
	ents, err := os.ReadDir(clones)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "app app.worktrees" {
		t.Fatalf("the clones folder holds %q", names)
	}
}
