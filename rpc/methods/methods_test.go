package methods_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/hostile"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sys/unix"
)

// host serves dirs to one phone with grant g; switchOn is the switch.
type host struct {
	*rpc.Host
	grant    trust.Grant
	switchOn atomic.Bool
	events   chan rpc.Event
	ids      map[string]string // folder -> target id
}

func (h *host) GrantFor(id, fp string) trust.Grant {
	if id == phone.ID && fp == phone.Fingerprint {
		return h.grant
	}
	return trust.None
}

var phone = rpc.Device{ID: "phone-1", Fingerprint: "00112233445566778899aabbccddeeff"}

func newHost(t *testing.T, g trust.Grant, dirs ...string) *host {
	t.Helper()
	return newHostWith(t, g, fsguard.Options{Home: "/nonexistent-home"}, rpc.HostOptions{}, dirs...)
}

// newHostWith is newHost with the folders' options (home, the state
// folder, the secret rules) and the host's test switches in o.
func newHostWith(t *testing.T, g trust.Grant, fo fsguard.Options, o rpc.HostOptions, dirs ...string) *host {
	t.Helper()
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		t.Fatal(err)
	}
	h := &host{grant: g, events: make(chan rpc.Event, 64), ids: map[string]string{}}
	targets := rpc.NewTargets(fo, gate.Options{})
	for _, d := range dirs {
		tg, err := targets.Add(d, trust.Served, "")
		if err != nil {
			t.Fatal(err)
		}
		h.ids[d] = tg.ID
	}
	o.Registry, o.Targets, o.Grants, o.FullAccess = reg, targets, h, h.switchOn.Load
	o.Events = func(dev string, ev rpc.Event) { h.events <- ev }
	h.Host = rpc.NewHost(o)
	t.Cleanup(func() { h.Close(); targets.Close() })
	return h
}

var n atomic.Int64

func (h *host) call(t *testing.T, method string, params map[string]any) rpc.Response {
	t.Helper()
	raw, _ := json.Marshal(params)
	i := n.Add(1)
	return h.Handle(context.Background(), phone, rpc.Request{Type: "req", ID: "r", Method: method, Params: raw,
		TS: time.Now().UnixMilli(), Nonce: "nonce-nonce-" + strconv.FormatInt(i, 10)})
}

func (h *host) ok(t *testing.T, method string, params map[string]any, into any) {
	t.Helper()
	r := h.call(t, method, params)
	if !r.OK {
		t.Fatalf("%s: %s %s", method, r.Code, r.Error)
	}
	if into != nil {
		if err := json.Unmarshal(r.Result, into); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *host) refused(t *testing.T, method string, params map[string]any, code rpc.Code, sentence string) {
	t.Helper()
	r := h.call(t, method, params)
	if r.OK || r.Code != code || !strings.Contains(r.Error, sentence) {
		t.Fatalf("%s: got %v %s %q, want %s %q", method, r.OK, r.Code, r.Error, code, sentence)
	}
	if strings.Contains(r.Error, "/tmp") {
		t.Fatalf("%s: a local path in %q", method, r.Error)
	}
}

// Every method refuses every grant below its scope, and a device with no
// grant at all, before it looks at its parameters.
func TestEveryMethodRefusesLowerGrants(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, m := range reg.Methods() {
		for _, g := range []trust.Grant{trust.None, trust.View, trust.Control, trust.Full} {
			h := newHost(t, g, dir)
			r := h.call(t, m.Name, map[string]any{"target": h.ids[dir]})
			allowed := g.Allows(m.Scope)
			if !allowed && (r.OK || r.Code != rpc.CodeAccess) {
				t.Errorf("%s with %v: %+v", m.Name, g, r)
			}
			if allowed && r.Code == rpc.CodeAccess {
				t.Errorf("%s with %v refused for access: %s", m.Name, g, r.Error)
			}
		}
	}
}

func TestFilesThroughTheDispatch(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "id_rsa")
	gittest.Write(t, root, map[string]string{"a.txt": "hello needle\n", ".env": "SECRET=needle-secret\n"})
	if err := os.WriteFile(outside, []byte("KEY needle-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../id_rsa", filepath.Join(root, "key.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(root, "readme.txt")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(root, "pipe.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, trust.View, root)
	id := h.ids[root]
	var txt fsguard.Text
	h.ok(t, "files.read", map[string]any{"target": id, "path": "a.txt"}, &txt)
	if txt.Text != "hello needle\n" || txt.Hash == "" {
		t.Fatalf("%+v", txt)
	}
	secret := "This file may hold secrets. Give this phone Full access on the computer to open it."
	h.refused(t, "files.read", map[string]any{"target": id, "path": ".env"}, rpc.CodeRefused, secret)
	h.refused(t, "files.read", map[string]any{"target": id, "path": "readme.txt"}, rpc.CodeRefused, secret)
	h.refused(t, "files.read", map[string]any{"target": id, "path": "key.txt"}, rpc.CodeRefused, secret)
	h.refused(t, "files.read", map[string]any{"target": id, "path": "notes.txt"}, rpc.CodeRefused, "hard-linked elsewhere")
	h.refused(t, "files.read", map[string]any{"target": id, "path": "pipe.txt"}, rpc.CodeRefused, "not a regular file")
	h.refused(t, "files.read", map[string]any{"target": id, "path": ".GIT/config"}, rpc.CodeRefused, "inside .git")
	h.refused(t, "files.read", map[string]any{"target": id, "path": "../id_rsa"}, rpc.CodeBadParams, "not valid here")
	h.refused(t, "files.read", map[string]any{"target": "t0000000000000000", "path": "a.txt"}, rpc.CodeBadParams, "not served here")
	var grep fsguard.GrepResult
	h.ok(t, "files.grep", map[string]any{"target": id, "query": "needle"}, &grep)
	if len(grep.Matches) != 1 || grep.Matches[0].Path != "a.txt" {
		t.Fatalf("grep: %+v", grep)
	}
	var list fsguard.Listing
	h.ok(t, "files.list", map[string]any{"target": id}, &list)
	flagged := map[string]bool{}
	for _, e := range list.Entries {
		flagged[e.Name] = e.Secret
	}
	if !flagged[".env"] || !flagged["readme.txt"] || !flagged["key.txt"] || flagged["a.txt"] {
		t.Fatalf("secret flags: %v", flagged)
	}
	// Writing needs full and the switch.
	h.refused(t, "files.write", map[string]any{"target": id, "path": "a.txt", "text": "x", "baseHash": txt.Hash}, rpc.CodeAccess, "full access")
	h.grant = trust.Full
	h.refused(t, "files.write", map[string]any{"target": id, "path": "a.txt", "text": "x", "baseHash": txt.Hash}, rpc.CodeSwitch,
		"Turn on Full access for remote devices on this computer to edit files.")
	h.switchOn.Store(true)
	h.ok(t, "files.write", map[string]any{"target": id, "path": "a.txt", "text": "new\n", "baseHash": txt.Hash}, nil)
	h.refused(t, "files.write", map[string]any{"target": id, "path": "a.txt", "text": "again\n", "baseHash": txt.Hash}, rpc.CodeConflict, "changed on the computer")
	h.refused(t, "files.write", map[string]any{"target": id, "path": "notes.txt", "text": "x", "baseHash": ""}, rpc.CodeRefused, "hard-linked")
	if data, _ := os.ReadFile(outside); string(data) != "KEY needle-key\n" {
		t.Fatal("the outside file changed")
	}
}

// A phone with the switch off gets the closed gate through every git method.
func TestGitThroughTheDispatch(t *testing.T) {
	prog, marker := gittest.PayloadFile(t)
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", ".env": "A=1\n"})
	gittest.Git(t, dir, "config", "core.fsmonitor", prog)
	hookMarker := gittest.Hook(t, dir, "pre-commit")
	gittest.Write(t, dir, map[string]string{"a.txt": "b\n", ".env": "A=secret-marker\n"})
	h := newHost(t, trust.Control, dir)
	id := h.ids[dir]
	var st struct {
		Files []struct{ Path string } `json:"files"`
	}
	h.ok(t, "git.status", map[string]any{"target": id}, &st)
	if len(st.Files) != 2 {
		t.Fatalf("status: %+v", st)
	}
	var d struct {
		Diff          string `json:"diff"`
		HiddenSecrets int    `json:"hiddenSecrets"`
	}
	h.ok(t, "git.diff", map[string]any{"target": id}, &d)
	if strings.Contains(d.Diff, "secret-marker") || d.HiddenSecrets != 1 {
		t.Fatalf("diff: %+v", d)
	}
	// core.fsmonitor names a program: reads switch it off, changes refuse.
	h.refused(t, "git.stage", map[string]any{"target": id, "all": true}, rpc.CodeRefused, "core.fsmonitor")
	gittest.Git(t, dir, "config", "--unset", "core.fsmonitor")
	var staged gatehouseStage
	h.ok(t, "git.stage", map[string]any{"target": id, "all": true}, &staged)
	if staged.Count != 1 || staged.Skipped != 1 {
		t.Fatalf("stage all: %+v (the secret is left out below full)", staged)
	}
	h.grant = trust.Full
	var c struct{ OID string }
	h.ok(t, "git.commit", map[string]any{"target": id, "message": "m", "sendId": "commit-1"}, &c)
	// The retry after a lost reply answers the first commit, and makes none.
	var again struct{ OID string }
	h.ok(t, "git.commit", map[string]any{"target": id, "message": "m", "sendId": "commit-1"}, &again)
	if c.OID == "" || again.OID != c.OID || strings.TrimSpace(gittest.Git(t, dir, "rev-list", "--count", "HEAD")) != "2" {
		t.Fatalf("commit %s, retry %s", c.OID, again.OID)
	}
	if gittest.Fired(marker) || gittest.Fired(hookMarker) {
		t.Fatal("a program of the checkout ran for a closed phone")
	}
	h.refused(t, "git.switchBranch", map[string]any{"target": id, "branch": "--orphan=x"}, rpc.CodeBadParams, "not a valid branch name")
}

type gatehouseStage struct {
	Count   int `json:"count"`
	Skipped int `json:"skipped"`
}

func TestWorktreesThroughTheDispatch(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	h := newHost(t, trust.Full, dir)
	var created struct{ Target, Branch string }
	h.ok(t, "worktree.create", map[string]any{"target": h.ids[dir], "branch": "feature"}, &created)
	var projects struct {
		Projects []methods.Project `json:"projects"`
	}
	h.ok(t, "projects.list", nil, &projects)
	if len(projects.Projects) != 2 {
		t.Fatalf("projects: %+v", projects)
	}
	for _, p := range projects.Projects {
		if strings.Contains(p.Name, "/") {
			t.Fatalf("a project named by a path: %+v", p)
		}
	}
	wt := h.Targets().All()
	var wtPath string
	for _, tg := range wt {
		if tg.ID == created.Target {
			wtPath = tg.Root.Path()
		}
	}
	gittest.Write(t, wtPath, map[string]string{"w.txt": "w\n"})
	gittest.Git(t, wtPath, "add", "w.txt")
	gittest.Git(t, wtPath, "commit", "-qm", "w")
	var ws struct{ Ahead int }
	h.ok(t, "worktree.status", map[string]any{"target": created.Target}, &ws)
	if ws.Ahead != 1 {
		t.Fatalf("worktree status %+v", ws)
	}
	h.ok(t, "worktree.merge", map[string]any{"target": created.Target}, nil)
	if _, err := os.Stat(filepath.Join(dir, "w.txt")); err != nil {
		t.Fatal("not merged")
	}
	h.ok(t, "worktree.remove", map[string]any{"target": created.Target}, nil)
	if _, ok := h.Targets().Get(created.Target); ok {
		t.Fatal("a removed worktree is still a target")
	}
	h.refused(t, "worktree.merge", map[string]any{"target": h.ids[dir]}, rpc.CodeBadParams, "not a worktree gatehouse made")
}

func TestSubscribeAndEvents(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	h := newHost(t, trust.View, dir)
	var sub struct {
		Targets []methods.Watched `json:"targets"`
	}
	h.ok(t, "subscribe", map[string]any{"targets": []string{h.ids[dir]}}, &sub)
	if len(sub.Targets) != 1 || sub.Targets[0].Head == "" || sub.Targets[0].Dirty {
		t.Fatalf("%+v", sub)
	}
	// A burst of changes gives one event, about a second later.
	for i := range 5 {
		gittest.Write(t, dir, map[string]string{"f" + strconv.Itoa(i) + ".txt": "x"})
	}
	select {
	case ev := <-h.events:
		var data struct{ Target string }
		_ = json.Unmarshal(ev.Data, &data)
		if ev.Name != "checkout.changed" || data.Target != h.ids[dir] {
			t.Fatalf("%+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no checkout.changed event")
	}
	select {
	case ev := <-h.events:
		t.Fatalf("a second event for one burst: %+v", ev)
	case <-time.After(1500 * time.Millisecond):
	}
}

// Queued background requests of one device expire, not those of another.
func TestLanesArePerDevice(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	h := newHost(t, trust.View, dir)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if r := h.call(t, "git.status", map[string]any{"target": h.ids[dir]}); !r.OK {
				t.Errorf("%+v", r)
			}
		})
	}
	wg.Wait()
}

// hostileRefusals maps the shared table's names to the refusal a device
// must read.
var hostileRefusals = map[string]*refusal.Error{"outside": fsguard.ErrOutsideRoot, "secret": fsguard.ErrSecret,
	"hard-link": fsguard.ErrHardLink, "git": fsguard.ErrGitPath, "not-regular": fsguard.ErrNotRegular,
	"links": fsguard.ErrTooManyLinks, "invalid": fsguard.ErrInvalidPath, "dir": fsguard.ErrIsDir,
	"not-found": fsguard.ErrNotFound, "not-dir": fsguard.ErrNotDir}

// The whole hostile table of fsguard's tests, through the methods a device
// calls: the same refusal, word for word, and never a forbidden byte.
func TestHostileTreesThroughTheMethods(t *testing.T) {
	for _, c := range hostile.Cases {
		t.Run(c.Name, func(t *testing.T) {
			base := hostile.Build(t, hostile.BaseTree+c.Tree)
			root := filepath.Join(base, "root")
			for _, g := range []trust.Grant{trust.View, trust.Full} {
				h := newHost(t, g, root)
				h.switchOn.Store(true)
				want, forbidden := c.Want, hostile.NeverBelowFull
				if g == trust.Full {
					want, forbidden = c.WantFull, hostile.NeverAtAll
				}
				for _, call := range []struct {
					method string
					params map[string]any
				}{
					{"files.read", map[string]any{"path": c.Open}},
					{"files.image", map[string]any{"path": c.Open, "variant": "full"}},
				} {
					call.params["target"] = h.ids[root]
					r := h.call(t, call.method, call.params)
					if want == "" {
						if call.method == "files.read" && !r.OK {
							t.Errorf("%v %s: %s", g, call.method, r.Error)
						}
					} else if r.OK || r.Error != hostileRefusals[want].Sentence() {
						t.Errorf("%v %s: got %q, want %q", g, call.method, r.Error, hostileRefusals[want].Sentence())
					}
					for _, m := range forbidden {
						if strings.Contains(string(r.Result), m) {
							t.Errorf("%v %s returned %s", g, call.method, m)
						}
					}
				}
				r := h.call(t, "files.grep", map[string]any{"target": h.ids[root], "query": "MARKER"})
				for _, m := range forbidden {
					if strings.Contains(string(r.Result), m) {
						t.Errorf("%v grep returned %s", g, m)
					}
				}
				if g == trust.Full && want != "" && want != "not-found" {
					if r := h.call(t, "files.write", map[string]any{"target": h.ids[root], "path": c.Open, "text": "PWNED", "baseHash": ""}); r.OK {
						t.Errorf("a write through %q succeeded", c.Open)
					}
				}
			}
		})
	}
}
