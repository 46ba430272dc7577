package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// grantTable is a Grants the test changes while requests wait.
type grantTable struct {
	mu sync.Mutex
	g  map[string]trust.Grant
}

func (t *grantTable) GrantFor(id, fp string) trust.Grant {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.g[id+"/"+fp]
}

func (t *grantTable) set(id string, g trust.Grant) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.g[id+"/"+fpOf] = g
}

const fpOf = "00112233445566778899aabbccddeeff"

// testHost is a host with test methods: block (waits on a channel), record
// (records the call's trust), count (a once-method counting its runs),
// fail (fails the first time), big (too large an answer).
type testHost struct {
	*Host
	grants   *grantTable
	switchOn atomic.Bool
	release  chan struct{}
	started  chan string
	runs     atomic.Int64
	trusts   chan trust.Trust
}

func newTestHost(t *testing.T) *testHost {
	th := &testHost{grants: &grantTable{g: map[string]trust.Grant{}}, release: make(chan struct{}),
		started: make(chan string, 16), trusts: make(chan trust.Trust, 16)}
	reg := NewRegistry()
	type p struct {
		Target string `json:"target,omitempty"`
		Fail   bool   `json:"fail,omitempty"`
	}
	type onceP struct { // test.count is once: its parameters embed SendID
		p
		SendID
	}
	for _, m := range []struct {
		meth Method
		h    func(ctx context.Context, c *Call, p p) (any, error)
	}{
		{Method{Name: "test.block", Scope: trust.View, Lane: LaneOrdered, Wait: 5 * time.Second},
			func(ctx context.Context, c *Call, _ p) (any, error) {
				th.started <- "block"
				select {
				case <-th.release:
				case <-ctx.Done():
				}
				return "released", nil
			}},
		{Method{Name: "test.record", Scope: trust.View, Lane: LaneOrdered, Wait: 5 * time.Second},
			func(ctx context.Context, c *Call, _ p) (any, error) { th.trusts <- c.Trust; return "ok", nil }},
		{Method{Name: "test.big", Scope: trust.View, Lane: LaneRead, ReadOnly: true},
			func(ctx context.Context, c *Call, _ p) (any, error) { return strings.Repeat("x", PageBudget), nil }},
		{Method{Name: "test.slow", Scope: trust.View, Lane: LaneSlowRead, ReadOnly: true},
			func(ctx context.Context, c *Call, _ p) (any, error) { return "slow", nil }},
		{Method{Name: "test.edit", Scope: trust.Full, Lane: LaneOrdered, Switch: "edit files"},
			func(ctx context.Context, c *Call, _ p) (any, error) { return "edited", nil }},
	} {
		if err := Register(reg, m.meth, m.h); err != nil {
			t.Fatal(err)
		}
	}
	if err := Register(reg, Method{Name: "test.count", Scope: trust.Control, Lane: LaneBackground, Wait: 5 * time.Second},
		func(ctx context.Context, c *Call, q onceP) (any, error) {
			n := th.runs.Add(1)
			th.started <- "count"
			select {
			case <-th.release:
			case <-time.After(50 * time.Millisecond):
			}
			if q.Fail && n == 1 {
				return nil, refusal.New(refusal.Refused, "x", "Failed once.")
			}
			return map[string]int64{"run": n}, nil
		}); err != nil {
		t.Fatal(err)
	}
	th.Host = NewHost(HostOptions{Registry: reg, Targets: NewTargets(fsguard.Options{}, gate.Options{}), Grants: th.grants,
		FullAccess: th.switchOn.Load})
	th.Host.orderedWait = 300 * time.Millisecond
	t.Cleanup(th.Host.Close)
	return th
}

var phone = Device{ID: "phone-1", Fingerprint: fpOf}

var seq atomic.Int64

func req(method, params string) Request {
	n := seq.Add(1)
	return Request{Type: "req", ID: "r" + itoa(int(n)), Method: method, Params: json.RawMessage(params),
		TS: time.Now().UnixMilli(), Nonce: "nonce-" + strings.Repeat("0", 12) + itoa(int(n))}
}

func (th *testHost) call(method, params string) Response {
	return th.Handle(context.Background(), phone, req(method, params))
}

func TestGrantsAndSwitch(t *testing.T) {
	th := newTestHost(t)
	if r := th.call("test.slow", "{}"); r.OK || r.Code != CodeAccess || !strings.Contains(r.Error, "not allowed") {
		t.Fatalf("no grant: %+v", r)
	}
	th.grants.set(phone.ID, trust.View)
	if r := th.call("test.count", "{}"); r.Code != CodeAccess || !strings.Contains(r.Error, "control access") {
		t.Fatalf("view calling control: %+v", r)
	}
	// The grant is bound to the key: another fingerprint has none.
	other := Device{ID: phone.ID, Fingerprint: strings.Repeat("f", 32)}
	if r := th.Handle(context.Background(), other, req("test.slow", "{}")); r.Code != CodeAccess {
		t.Fatalf("another key: %+v", r)
	}
	th.grants.set(phone.ID, trust.Full)
	if r := th.call("test.edit", "{}"); r.Code != CodeSwitch || r.Error != "Turn on Full access for remote devices on this computer to edit files." {
		t.Fatalf("switch off: %+v", r)
	}
	th.switchOn.Store(true)
	if r := th.call("test.edit", "{}"); !r.OK {
		t.Fatalf("switch on: %+v", r)
	}
	if r := th.call("nope", "{}"); r.Code != CodeUnknownMethod || r.Error != "Unknown method." {
		t.Fatalf("unknown: %+v", r)
	}
	if r := th.call("test.slow", `{"extra":1}`); r.Code != CodeBadParams {
		t.Fatalf("unknown param: %+v", r)
	}
	if r := th.call("test.big", "{}"); r.Code != CodeInternal || !strings.Contains(r.Error, "too large") {
		t.Fatalf("over the page budget: %+v", r)
	}
}

// The switch is read when a request is admitted; flipping it while the
// request waits in its lane changes nothing for that request.
func TestSwitchTravelsWithTheRequest(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.Full)
	go th.call("test.block", "{}")
	<-th.started
	done := make(chan Response)
	go func() { done <- th.call("test.record", "{}") }() // admitted with the switch off
	time.Sleep(50 * time.Millisecond)
	th.switchOn.Store(true)
	th.release <- struct{}{}
	if r := <-done; !r.OK {
		t.Fatalf("%+v", r)
	}
	if tr := <-th.trusts; !tr.Closed() {
		t.Fatalf("the request ran with %v, not the switch it was admitted with", tr)
	}
}

// A revoked device's queued request does not run.
func TestAccessIsCheckedAgainWhenARequestStarts(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.Full)
	go th.call("test.block", "{}")
	<-th.started
	done := make(chan Response)
	go func() { done <- th.call("test.record", "{}") }()
	time.Sleep(50 * time.Millisecond)
	th.grants.set(phone.ID, trust.None)
	th.release <- struct{}{}
	if r := <-done; r.OK || r.Code != CodeAccess {
		t.Fatalf("a revoked device's queued request: %+v", r)
	}
	select {
	case <-th.trusts:
		t.Fatal("the handler ran")
	default:
	}
}

func TestOrderedLaneExpires(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.Full)
	go th.call("test.block", "{}")
	<-th.started
	start := time.Now()
	r := th.call("test.record", "{}")
	if r.OK || r.Code != CodeNotRun || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("queued past the ordered wait: %+v after %v", r, time.Since(start))
	}
	close(th.release)
}

// A once-method retried under the same sendId runs once, also when the
// retry arrives while the first still runs; a failure is not remembered.
func TestOnceMethods(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.Control)
	a := th.call("test.count", `{"target":"t1","sendId":"s1"}`)
	b := th.call("test.count", `{"target":"t1","sendId":"s1"}`)
	if !a.OK || string(a.Result) != string(b.Result) || th.runs.Load() != 1 {
		t.Fatalf("sequential repeat ran %d times: %s / %s", th.runs.Load(), a.Result, b.Result)
	}
	<-th.started
	// Concurrent: the repeat arrives while the first runs.
	th.runs.Store(0)
	var wg sync.WaitGroup
	results := make([]Response, 3)
	for i := range results {
		wg.Go(func() { results[i] = th.call("test.count", `{"target":"t1","sendId":"s2"}`) })
	}
	time.Sleep(20 * time.Millisecond)
	wg.Wait()
	if th.runs.Load() != 1 {
		t.Fatalf("concurrent repeats ran %d times", th.runs.Load())
	}
	for _, r := range results {
		if !r.OK || string(r.Result) != string(results[0].Result) {
			t.Fatalf("answers differ: %+v", results)
		}
	}
	<-th.started
	// Another target or id is another action.
	th.runs.Store(0)
	th.call("test.count", `{"target":"t2","sendId":"s2"}`)
	<-th.started
	if th.runs.Load() != 1 {
		t.Fatal("a different target shared the answer")
	}
	// A failure is not remembered: the retry runs.
	th.runs.Store(0)
	f1 := th.call("test.count", `{"sendId":"s3","fail":true}`)
	<-th.started
	f2 := th.call("test.count", `{"sendId":"s3","fail":true}`)
	<-th.started
	if f1.OK || !f2.OK || th.runs.Load() != 2 {
		t.Fatalf("after a failure: %+v %+v, %d runs", f1, f2, th.runs.Load())
	}
	if r := th.call("test.slow", `{"sendId":"x"}`); r.Code != CodeBadParams {
		t.Fatalf("sendId on a method that is not once: %+v", r)
	}
}

func TestBatchAndHello(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	r := th.call("batch", `{"calls":[{"method":"host.hello"},{"method":"test.slow"},{"method":"test.count"},{"method":"nope"}]}`)
	if !r.OK {
		t.Fatalf("%+v", r)
	}
	var results []BatchResult
	_ = json.Unmarshal(r.Result, &results)
	if len(results) != 4 || !results[0].OK || results[1].Code != CodeBadParams || results[2].Code != CodeBadParams || results[3].Code != CodeUnknownMethod {
		t.Fatalf("batch: %+v", results)
	}
	var hello Hello
	_ = json.Unmarshal(results[0].Result, &hello)
	if *hello.Access != "view" || hello.MethodAccess["test.edit"] != "full" || strings.Join(hello.FullAccessSwitch, ",") != "test.edit" ||
		hello.Limits["pageBudget"] != PageBudget {
		t.Fatalf("hello: %+v", hello)
	}
	calls := strings.Repeat(`{"method":"host.hello"},`, MaxBatch)
	if r := th.call("batch", `{"calls":[`+calls+`{"method":"host.hello"}]}`); r.Code != CodeBadParams {
		t.Fatalf("batch over its bound: %+v", r)
	}
}

func TestSealedFrames(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	k := testKey()
	in, out := LANAAD(phone.ID, "host"), LANAAD(phone.ID, "device")
	r := req("test.slow", "{}")
	r.Z = 1
	plain, _ := json.Marshal(r)
	body := Seal(k, plain, in)
	answer, err := th.HandleSealed(context.Background(), phone, k, in, out, body)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := Open(k, answer, out)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := ParseResponse(reply)
	if !res.OK || string(res.Result) != `"slow"` {
		t.Fatalf("%+v", res)
	}
	// The same frame again is a replay.
	answer, _ = th.HandleSealed(context.Background(), phone, k, in, out, body)
	reply, _ = Open(k, answer, out)
	if res, _ := ParseResponse(reply); res.OK || res.Code != CodeNotRun || !strings.Contains(res.Error, "stale or repeated") {
		t.Fatalf("replay: %+v", res)
	}
	// A reply fed back as a request does not open (the direction is bound).
	if _, err := th.HandleSealed(context.Background(), phone, k, in, out, Seal(k, plain, out)); err == nil {
		t.Fatal("a frame sealed toward the device opened as a request")
	}
	stale := req("test.slow", "{}")
	stale.TS -= 120_000
	sp, _ := json.Marshal(stale)
	answer, _ = th.HandleSealed(context.Background(), phone, k, in, out, Seal(k, sp, in))
	reply, _ = Open(k, answer, out)
	if res, _ := ParseResponse(reply); res.OK {
		t.Fatal("a two-minute-old request ran")
	}
	if _, err := th.HandleSealed(context.Background(), phone, k, in, out, Seal(k, pack(append(plain, make([]byte, 4000)...)), in)); err == nil {
		t.Fatal("a packed request was accepted")
	}
}

func TestRequestLog(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenRequestLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	th := newTestHost(t)
	th.o.Log = l
	th.grants.set(phone.ID, trust.View)
	th.call("test.slow", `{}`)
	th.call("test.edit", `{"target":"secret-param-value"}`)
	l.Close()
	entries, broken, err := ReadLog(dir)
	if err != nil || broken >= 0 || len(entries) != 2 || entries[1].Code != "ACCESS" || entries[0].Fingerprint != fpOf {
		t.Fatalf("%+v %d %v", entries, broken, err)
	}
	// Reopening continues the chain.
	l, _ = OpenRequestLog(dir)
	th.o.Log = l
	th.call("test.slow", `{}`)
	l.Close()
	if entries, broken, err := ReadLog(dir); err != nil || broken >= 0 || len(entries) != 3 {
		t.Fatalf("after reopening: %d entries, broken %d, %v", len(entries), broken, err)
	}
	// Cutting a line out breaks the chain at the line after it.
	data := readFile(t, dir+"/"+logName)
	lines := strings.SplitAfter(data, "\n")
	writeFile(t, dir+"/"+logName, lines[0]+lines[2])
	if _, broken, err := ReadLog(dir); !errors.Is(err, ErrChainBroken) || broken != 1 {
		t.Fatalf("a cut log: broken %d, %v", broken, err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
