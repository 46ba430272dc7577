package regress

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/leakcheck"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
)

// Options say how to run the corpus.
type Options struct {
	Git  string         // the git binary; "" for git on PATH
	Run  *regexp.Regexp // only cases whose name matches
	Keep bool           // keep each case's folder, and say where
	// Progress, when set, hears each case as it starts.
	Progress func(i, n int, name string)
}

// Result is one case's outcome.
type Result struct {
	Name   string `json:"name"`
	Attack string `json:"attack"`
	Status string `json:"status"` // "pass", "FAIL" or "skip"
	Reason string `json:"reason,omitempty"`
	Git    string `json:"git"`
	MS     int64  `json:"ms"`
	Dir    string `json:"dir,omitempty"` // with Keep
}

// caseTimeout bounds every git call of a case through gatehouse: a FIFO can
// stall git, and the answer must then come in bounded time.
const caseTimeout = 10 * time.Second

// Run runs the cases and returns one result each. A case that leaves a
// process running after it ends fails, naming it, and the process is
// killed: Run owns the process it runs in (the gatehouse regress command),
// so call it where nothing else is meant to be running.
func Run(ctx context.Context, cases []Case, o Options) ([]Result, error) {
	if err := leakcheck.Start(); err != nil {
		return nil, err
	}
	version, git, err := gate.Version(ctx, o.Git)
	if err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp("", "gatehouse-regress-")
	if err != nil {
		return nil, err
	}
	if !o.Keep {
		defer os.RemoveAll(base)
	}
	var picked []Case
	for _, c := range cases {
		if o.Run == nil || o.Run.MatchString(c.Name) {
			picked = append(picked, c)
		}
	}
	results := make([]Result, 0, len(picked))
	for i, c := range picked {
		if o.Progress != nil {
			o.Progress(i, len(picked), c.Name)
		}
		r := RunCase(ctx, c, git, version, filepath.Join(base, c.Name))
		if left := leakcheck.Sweep(leakcheck.Grace); len(left) > 0 {
			r.Status, r.Reason = "FAIL", leftRunning(left)
		}
		if o.Keep {
			r.Dir = filepath.Join(base, c.Name)
		}
		results = append(results, r)
	}
	return results, nil
}

// leftRunning is the failure of a case whose processes outlived it.
func leftRunning(left []leakcheck.Proc) string {
	names := make([]string, len(left))
	for i, p := range left {
		names[i] = p.String()
	}
	return fmt.Sprintf("left %d process(es) running after the case (killed now): %s", len(left), strings.Join(names, "; "))
}

// RunCase runs one case in the folder work: reproduce, then attack. A case
// that panics fails; what it started is stopped on the way out.
func RunCase(ctx context.Context, c Case, git, version, work string) (r Result) {
	start := time.Now()
	r = Result{Name: c.Name, Attack: c.Attack, Git: strings.TrimPrefix(version, "git version ")}
	done := func(status, reason string) Result {
		r.Status, r.Reason, r.MS = status, reason, time.Since(start).Milliseconds()
		return r
	}
	defer func() {
		if p := recover(); p != nil {
			r = done("FAIL", fmt.Sprintf("the case panicked: %v", p))
		}
	}()
	if !applies(r.Git, c.Since, c.Before) {
		return done("skip", applyReason(c.Since, c.Before))
	}
	if err := reproduce(ctx, c, git, filepath.Join(work, "reproduce")); err != nil {
		return done("FAIL", err.Error())
	}
	if err := attack(ctx, c, git, filepath.Join(work, "attack")); err != nil {
		return done("FAIL", err.Error())
	}
	return done("pass", "")
}

// reproduce proves the exploit fires without gatehouse's closed gate.
func reproduce(ctx context.Context, c Case, git, work string) error {
	e, err := setUp(c, git, work)
	if err != nil {
		return err
	}
	defer e.close()
	var out string
	if c.Plain != nil {
		out = c.Plain(e)
	} else {
		host, cleanup, err := e.serve(git, trust.Full)
		if err != nil {
			return fmt.Errorf("setup: serving the checkout: %v", err)
		}
		defer cleanup()
		dev := rpc.Device{ID: "desktop", Desktop: true}
		res := host.Handle(ctx, dev, e.request(ctx, host, dev, c))
		raw, _ := json.Marshal(res)
		out = string(raw)
	}
	if !fired(c, e, out) {
		return fmt.Errorf("not-reproduced: the exploit did not fire without the gate")
	}
	return nil
}

// attack runs the case's method as a phone with the switch off and checks
// the exploit never fires and the answer is the one the case wants.
func attack(ctx context.Context, c Case, git, work string) error {
	e, err := setUp(c, git, work)
	if err != nil {
		return err
	}
	defer e.close()
	grant := c.Grant
	if grant == trust.None {
		grant = trust.Full
	}
	host, cleanup, err := e.serve(git, grant)
	if c.Want.Unserved {
		if err == nil {
			cleanup()
			return fmt.Errorf("gatehouse served a folder it must refuse")
		}
		if s := refusal.Sentence(err); !strings.Contains(s, c.Want.Sentence) {
			return fmt.Errorf("serving refused with %q, want %q", s, c.Want.Sentence)
		}
		if e.Fired() {
			return fmt.Errorf("the payload ran")
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("setup: serving the checkout: %v", err)
	}
	defer cleanup()
	dev := rpc.Device{ID: "regress-phone", Fingerprint: strings.Repeat("0", 32)}
	res := host.Handle(ctx, dev, e.request(ctx, host, dev, c))
	raw, _ := json.Marshal(res)
	if fired(c, e, string(raw)) {
		return fmt.Errorf("the exploit fired through gatehouse (answer %s %q)", res.Code, res.Error)
	}
	switch {
	case c.Want.Code == "" && !res.OK:
		return fmt.Errorf("want a safe success, got %s: %s", res.Code, res.Error)
	case c.Want.Code != "" && (res.OK || res.Code != c.Want.Code || !strings.Contains(res.Error, c.Want.Sentence)):
		return fmt.Errorf("want %s %q, got %v %s %q", c.Want.Code, c.Want.Sentence, res.OK, res.Code, res.Error)
	case strings.Contains(res.Error, e.Work):
		return fmt.Errorf("the answer names a local path: %q", res.Error)
	}
	return nil
}

func fired(c Case, e *Env, out string) bool {
	if c.Fired != nil {
		return c.Fired(e, out)
	}
	return e.Fired()
}

func setUp(c Case, git, work string) (*Env, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	e, err := newEnv(git, work)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			e.close() // a daemon the build started must not outlive it
			panic(p)
		}
	}()
	c.Build(e)
	if e.err != nil {
		e.close()
		return nil, fmt.Errorf("setup: %v", e.err)
	}
	return e, nil
}

// fixedGrant gives the case's one phone its grant.
type fixedGrant trust.Grant

func (g fixedGrant) GrantFor(string, string) trust.Grant { return trust.Grant(g) }

// serve builds a host serving the case's folders, with the switch off.
func (e *Env) serve(git string, g trust.Grant) (*rpc.Host, func(), error) {
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		return nil, nil, err
	}
	targets := rpc.NewTargets(fsguard.Options{Home: e.home},
		gate.Options{Git: git, Home: e.home, Timeout: caseTimeout})
	host := rpc.NewHost(rpc.HostOptions{Registry: reg, Targets: targets, Grants: fixedGrant(g)})
	cleanup := func() { host.Close(); targets.Close() }
	var parent string
	for _, x := range e.Extra {
		t, err := targets.Add(x, trust.Served, "")
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		parent = t.ID
	}
	var t *rpc.Target
	var err error
	if e.Worktree {
		t, err = host.AddWorktree(e.Dir, parent)
	} else {
		t, err = targets.Add(e.Dir, trust.Served, "")
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	e.Target = t.ID
	return host, cleanup, nil
}

// The params a case fills from what git.conflicts answers the same device
// just before its call: the operation in progress and its id.
const (
	seenOpParam = "$seenOp"
	seenIDParam = "$seenID"
)

// request is the case's call, with $target and $marker filled in, and
// $seenOp and $seenID from git.conflicts asked by dev first.
func (e *Env) request(ctx context.Context, host *rpc.Host, dev rpc.Device, c Case) rpc.Request {
	params := map[string]any{}
	if c.Params != nil {
		params = c.Params(e)
	}
	var seen struct{ Op, ID string }
	for _, v := range params {
		if v == seenOpParam || v == seenIDParam {
			raw, _ := json.Marshal(map[string]string{"target": e.Target})
			res := host.Handle(ctx, dev, rpc.Request{Type: "req", ID: "regress-seen", Method: "git.conflicts", Params: raw,
				TS: time.Now().UnixMilli(), Nonce: fmt.Sprintf("regress-seen-%d", time.Now().UnixNano())})
			_ = json.Unmarshal(res.Result, &seen) // a refusal leaves them empty: the call is then refused as changed
			break
		}
	}
	for k, v := range params {
		if s, ok := v.(string); ok {
			params[k] = strings.NewReplacer("$target", e.Target, "$marker", e.Marker, seenOpParam, seen.Op, seenIDParam, seen.ID).Replace(s)
		}
	}
	raw, _ := json.Marshal(params)
	return rpc.Request{Type: "req", ID: "regress", Method: c.Method, Params: raw, TS: time.Now().UnixMilli(),
		Nonce: fmt.Sprintf("regress-%d", time.Now().UnixNano())}
}

// applies reports whether a git version is inside [since, before).
func applies(version, since, before string) bool {
	v := versionOf(version)
	return (since == "" || !less(v, versionOf(since))) && (before == "" || less(v, versionOf(before)))
}

func applyReason(since, before string) string {
	switch {
	case since != "" && before != "":
		return "applies to git " + since + " up to " + before
	case since != "":
		return "needs git " + since + " or later"
	}
	return "applies before git " + before
}

func versionOf(s string) [3]int {
	var v [3]int
	for i, p := range strings.SplitN(strings.Fields(s + " ")[0], ".", 3) {
		fmt.Sscanf(p, "%d", &v[i])
	}
	return v
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
