package methods_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
)

// fullDevices gives every device full access.
type fullDevices struct{}

func (fullDevices) GrantFor(id, fp string) trust.Grant { return trust.Full }

var cloneSeq atomic.Int64

func callAs(h *rpc.Host, dev rpc.Device, method string, params any) rpc.Response {
	raw, _ := json.Marshal(params)
	return h.Handle(context.Background(), dev, rpc.Request{Type: "req", ID: "r", Method: method, Params: raw,
		TS: time.Now().UnixMilli(), Nonce: "clone-nonce-" + strconv.FormatInt(cloneSeq.Add(1), 10)})
}

// A clone asked for from a phone: refused with the switch off; with it on,
// gh clones into the clones folder (its claimed name), the checkout is
// served and remembered for the next start, and only the device that
// asked sees how it went.
func TestCloneOverTheProtocol(t *testing.T) {
	gittest.Home(t, "")
	src := gittest.Init(t, map[string]string{"README.md": "# hello\n"})
	bin := t.TempDir()
	gh := filepath.Join(bin, "gh")
	// gh repo clone, as gh would run it: git clone into the folder given
	// (from a local source, so the stand-in allows the file transport).
	script := "#!/bin/sh\n[ \"$1 $2 $3\" = 'repo clone github.com/octo/hello' ] || { echo \"unexpected: $*\" >&2; exit 2; }\n" +
		"env -u GIT_ALLOW_PROTOCOL git -c protocol.file.allow=always clone -q '" + src + "' \"$4\"\n"
	if err := os.WriteFile(gh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	clones := filepath.Join(t.TempDir(), "clones")
	gittest.Write(t, clones, map[string]string{"hello/mine.txt": "mine\n"})
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		t.Fatal(err)
	}
	targets := rpc.NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{GH: gh})
	var switchOn atomic.Bool
	remembered := map[string]trust.TargetKind{}
	h := rpc.NewHost(rpc.HostOptions{Registry: reg, Targets: targets, Grants: fullDevices{}, FullAccess: switchOn.Load, ClonesDir: clones,
		Remember: func(kind trust.TargetKind, id, path, parent string) { remembered[path] = kind }})
	t.Cleanup(func() { h.Close(); targets.Close() })
	a := rpc.Device{ID: "phone-a", Fingerprint: "00112233445566778899aabbccddeeff"}
	b := rpc.Device{ID: "phone-b", Fingerprint: "ffeeddccbbaa99887766554433221100"}

	if r := callAs(h, a, "projects.clone", map[string]string{"repo": "octo/hello"}); r.OK || r.Code != rpc.Code("SWITCH") {
		t.Fatalf("with the switch off: %+v", r)
	}
	switchOn.Store(true)
	for _, bad := range []string{"octo", "evil.example/octo/hello", "octo/-rf"} {
		if r := callAs(h, a, "projects.clone", map[string]string{"repo": bad}); r.OK {
			t.Fatalf("clone %q accepted", bad)
		}
	}
	r := callAs(h, a, "projects.clone", map[string]string{"repo": "octo/hello"})
	if !r.OK {
		t.Fatalf("clone: %s %s", r.Code, r.Error)
	}
	var job struct{ ID, State string }
	mustUnmarshal(t, r.Result, &job)
	var st struct{ State, Target, Name, Error string }
	for i := 0; ; i++ {
		r := callAs(h, a, "projects.cloneStatus", map[string]string{"id": job.ID})
		if !r.OK {
			t.Fatalf("status: %s %s", r.Code, r.Error)
		}
		mustUnmarshal(t, r.Result, &st)
		if st.State != "running" {
			break
		}
		if i > 200 {
			t.Fatal("the clone never finished")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.State != "done" || st.Name != "hello-2" {
		t.Fatalf("clone ended %+v", st)
	}
	if r := callAs(h, b, "projects.cloneStatus", map[string]string{"id": job.ID}); r.OK || r.Error != "This device started no clone by that name." {
		t.Fatalf("another device sees the clone: %+v", r)
	}
	if _, ok := targets.Get(st.Target); !ok {
		t.Fatal("the clone is not served")
	}
	if remembered[filepath.Join(mustCanon(t, clones), "hello-2")] != trust.Clone {
		t.Fatalf("the clone is not remembered for the next start: %v", remembered)
	}
	var recent struct {
		Repos []struct{ Repo, Target, Name string }
	}
	if r := callAs(h, a, "projects.recentRepos", struct{}{}); !r.OK {
		t.Fatal(r.Error)
	} else {
		mustUnmarshal(t, r.Result, &recent)
	}
	if len(recent.Repos) != 1 || recent.Repos[0].Target != st.Target {
		t.Fatalf("recent: %+v", recent)
	}
}

func mustCanon(t *testing.T, dir string) string {
	t.Helper()
	c, err := trust.Canonical(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
