package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/logbuf"
	"github.com/gatehouse/gatehouse/trust"
)

func slogText(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// A commit refused by git (no author identity) reaches the device as a
// sentence that says what to do, and the host's log holds git's own words
// with the request's id. Before, the device read "Git could not do this
// here." and the log held nothing: the logger was a discard and only INTERNAL
// failures were logged.
func TestRefusalCauseIsLoggedWithTheRequestID(t *testing.T) {
	home := gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	gittest.Write(t, dir, map[string]string{"a.txt": "changed\n"})
	gittest.Git(t, dir, "add", "a.txt")
	// Nobody is named: no user.name, no user.email, and no guessing.
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tuseConfigOnly = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry()
	type commitParams struct {
		Target  string `json:"target"`
		Message string `json:"message"`
	}
	if err := Register(reg, Method{Name: "test.commit", Scope: trust.Full, Lane: LaneBackground},
		func(ctx context.Context, c *Call, p commitParams) (any, error) {
			tg, err := c.Target(p.Target)
			if err != nil {
				return nil, err
			}
			return tg.Repo.Commit(ctx, c.Trust, p.Message, false)
		}); err != nil {
		t.Fatal(err)
	}
	targets := NewTargets(fsguard.Options{}, gate.Options{})
	t.Cleanup(targets.Close)
	tg, err := targets.Add(dir, trust.Served, "")
	if err != nil {
		t.Fatal(err)
	}
	grants := &grantTable{g: map[string]trust.Grant{}}
	grants.set(phone.ID, trust.Full)
	var log logbuf.Buffer
	h := NewHost(HostOptions{Registry: reg, Targets: targets, Grants: grants,
		Logger: slogText(&log)})
	t.Cleanup(h.Close)

	params, _ := json.Marshal(commitParams{Target: tg.ID, Message: "m"})
	r := req("test.commit", string(params))
	res := h.Handle(context.Background(), phone, r)
	if res.OK || res.Code != CodeRefused || !strings.Contains(res.Error, "git config --global user.name") {
		t.Fatalf("the device read %+v", res)
	}
	for _, leak := range []string{"Please tell me who you are", "auto-detection", dir, home} {
		if strings.Contains(res.Error, leak) {
			t.Errorf("the sentence %q carries %q", res.Error, leak)
		}
	}
	logged := log.String()
	if !strings.Contains(logged, "id="+r.ID) || !strings.Contains(logged, "Please tell me who you are") ||
		!strings.Contains(logged, "method=test.commit") {
		t.Fatalf("the host's log lacks the cause or the id:\n%s", logged)
	}
	if n := strings.Count(logged, "request refused"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, logged)
	}
}

// A parameter refusal names the parameter and what it expected.
func TestBadParamsSaysWhichAndWhat(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	for _, c := range []struct{ params, want string }{
		{`{"extra":1}`, `This request's parameters are not valid: this method takes no parameter "extra".`},
		{`{"fail":"yes"}`, `This request's parameters are not valid: "fail" should be true or false, not text.`},
		{`{"target":5}`, `This request's parameters are not valid: "target" should be text, not a number like that.`},
		{`[1]`, `This request's parameters are not valid: they should be an object.`},
		{`{"target":"a"} {}`, `This request's parameters are not valid: they hold more than one JSON value.`},
		{`{"` + strings.Repeat("x", 100) + `":1}`, `This request's parameters are not valid: this method takes no parameter by that name.`},
	} {
		r := th.call("test.slow", c.params)
		if r.OK || r.Code != CodeBadParams || r.Error != c.want {
			t.Errorf("%s: %+v", c.params, r)
		}
	}
	r := th.call("batch", `{"calls":[]}`)
	if r.Code != CodeBadParams || !strings.Contains(r.Error, `"calls" should be a list of 1 to 20 calls`) {
		t.Errorf("empty batch: %+v", r)
	}
}

// deep is a request's params nested n levels deep.
func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// Params 10,000 levels deep are answered BAD_PARAMS through a sealed frame.
// Before the fix the envelope failed encoding/json's own depth limit
// (10,000 levels, plus one for the envelope), the frame got no answer, and
// the device told its person the computer was not connected.
func TestDeepParamsAreAParameterRefusal(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	k := testKey()
	in, out := LANAAD(phone.ID, "host"), LANAAD(phone.ID, "device")
	for _, n := range []int{10_000, 100_000, MaxDepth + 1} {
		r := req("test.slow", deep(n))
		plain, err := json.Marshal(struct {
			Request
			Params json.RawMessage `json:"params"`
		}{r, nil})
		if err != nil {
			t.Fatal(err)
		}
		// json.Marshal would refuse to write it; splice it in by hand.
		plain = bytes.Replace(plain, []byte(`"params":null`), []byte(`"params":`+deep(n)), 1)
		answer, err := th.HandleSealed(context.Background(), phone, k, in, out, Seal(k, plain, in))
		if err != nil {
			t.Fatalf("%d levels: no answer: %v", n, err)
		}
		reply, err := Open(k, answer, out)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ParseResponse(reply)
		if err != nil || res.ID != r.ID || res.Code != CodeBadParams || !strings.Contains(res.Error, "nest more than 64 levels") {
			t.Fatalf("%d levels: %+v %v", n, res, err)
		}
	}
	// At the bound it decodes (and is refused for its type, not its depth).
	if r := th.call("test.slow", `{"target":`+deep(MaxDepth-1)+`}`); r.Code != CodeBadParams || strings.Contains(r.Error, "nest") {
		t.Fatalf("at the bound: %+v", r)
	}
	// Inside a batch too.
	if r := th.call("batch", `{"calls":[{"method":"test.slow","params":`+deep(MaxDepth)+`}]}`); r.Code != CodeBadParams {
		t.Fatalf("deep inside a batch: %+v", r)
	}
}

// The scanner finds the params value wherever it sits and skips strings
// with their escapes.
func TestScanJSON(t *testing.T) {
	for _, c := range []struct {
		in     string
		depth  int
		params string
	}{
		{`{"id":"x","params":{"a":[1]},"ts":1}`, 3, `{"a":[1]}`},
		{`{"params":[[ ]] }`, 3, `[[ ]] `},
		{`{"id":"[[[\"]]{","params":1}`, 1, `1`},
		{`{"params":"x","params":[2]}`, 2, `[2]`},
		{`{"id":"params","x":{"params":[[[1]]]}}`, 5, ``},
		{`{"p\u0061rams":[]}`, 2, ``},
	} {
		depth, start, end := scanJSON([]byte(c.in))
		got := ""
		if start >= 0 && end > start {
			got = c.in[start:end]
		}
		if depth != c.depth || got != c.params {
			t.Errorf("%s: depth %d params %q", c.in, depth, got)
		}
	}
}

// countingGrants counts its reads and answers from a script: the first
// read, the second, then the last answer on.
type countingGrants struct {
	reads  atomic.Int64
	script []trust.Grant
}

func (g *countingGrants) GrantFor(id, fp string) trust.Grant {
	n := int(g.reads.Add(1)) - 1
	return g.script[min(n, len(g.script)-1)]
}

// One admission step: a single call reads the switch once and the grant
// once at arrival and once as it starts, and the handler runs with the
// grant that was checked as it started. Before, the switch was read twice
// for a method behind it, and the grant read a third time after the check,
// so a handler could run with a grant no check had seen.
func TestOneAdmissionStep(t *testing.T) {
	th := newTestHost(t)
	g := &countingGrants{script: []trust.Grant{trust.Full, trust.View, trust.Full}}
	th.o.Grants = g
	var switchReads atomic.Int64
	th.o.FullAccess = func() bool { switchReads.Add(1); return true }
	var seen trust.Grant
	reg := th.o.Registry
	if err := Register(reg, Method{Name: "test.grant", Scope: trust.View, Lane: LaneRead, ReadOnly: true},
		func(ctx context.Context, c *Call, _ struct{}) (any, error) { seen = c.Grant; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if r := th.call("test.grant", "{}"); !r.OK || seen != trust.View || g.reads.Load() != 2 || switchReads.Load() != 1 {
		t.Fatalf("%+v: ran with %v after %d grant reads, %d switch reads", r, seen, g.reads.Load(), switchReads.Load())
	}
	// A method behind the switch: still one read of it.
	g.reads.Store(0)
	g.script = []trust.Grant{trust.Full}
	switchReads.Store(0)
	if r := th.call("test.edit", "{}"); !r.OK || switchReads.Load() != 1 || g.reads.Load() != 2 {
		t.Fatalf("%+v: %d switch reads, %d grant reads", r, switchReads.Load(), g.reads.Load())
	}
	// A batch: the switch once for all its calls, the grant once for the
	// batch's arrival and start and once per call, each call's handler
	// running with its own read.
	g.reads.Store(0)
	switchReads.Store(0)
	calls := strings.Repeat(`{"method":"test.grant"},`, 4) + `{"method":"host.hello"}`
	r := th.call("batch", `{"calls":[`+calls+`]}`)
	if !r.OK || switchReads.Load() != 1 || g.reads.Load() != 2+5 {
		t.Fatalf("batch %+v: %d switch reads, %d grant reads", r, switchReads.Load(), g.reads.Load())
	}
	var results []BatchResult
	_ = json.Unmarshal(r.Result, &results)
	var hello Hello
	if err := json.Unmarshal(results[4].Result, &hello); err != nil || hello.Access == nil || *hello.Access != "full" {
		t.Fatalf("hello in a batch: %+v %v", results, err)
	}
}

// A batch call refused inside a batch is logged with the batch's id and its
// place, and a single refusal once.
func TestBatchRefusalsAreLogged(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	var log logbuf.Buffer
	th.o.Logger = slogText(&log)
	r := req("batch", `{"calls":[{"method":"host.hello"},{"method":"test.edit"}]}`)
	if res := th.Handle(context.Background(), phone, r); !res.OK {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(log.String(), "id="+r.ID+"#1") || !strings.Contains(log.String(), `cause="`+ErrNotInBatch.Error()+`"`) {
		t.Fatalf("log:\n%s", log.String())
	}
}
