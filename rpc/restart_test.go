package rpc

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// A request recorded before a restart (by the relay, which sees every
// sealed frame, or by anyone on the path) does not run after it: the replay
// memory starts empty with each run, so a frame still inside its 60 s
// window would run again, once-methods included (the sendId memory is gone
// too). With the rule off the replay runs; with it, the host refuses every
// request stamped before it started.
func TestARecordingDoesNotRunAfterARestart(t *testing.T) {
	for _, off := range []bool{true, false} {
		th := newTestHost(t)
		th.grants.set(phone.ID, trust.Control)
		k := testKey()
		in, out := LANAAD(phone.ID, "host"), LANAAD(phone.ID, "device")
		r := req("test.count", `{"sendId":"s1"}`)
		plain, _ := json.Marshal(r)
		frame := Seal(k, plain, in)
		if _, err := th.HandleSealed(context.Background(), phone, k, in, out, frame); err != nil || th.runs.Load() != 1 {
			t.Fatalf("the first run: %v, %d runs", err, th.runs.Load())
		}
		after := newTestHost(t) // the same device and key, a new run
		after.grants.set(phone.ID, trust.Control)
		after.Host.started = time.UnixMilli(r.TS + 1)
		after.beforeStartForTest = off
		answer, err := after.HandleSealed(context.Background(), phone, k, in, out, frame)
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := Open(k, answer, out)
		res, _ := ParseResponse(reply)
		if off {
			if !res.OK || after.runs.Load() != 1 {
				t.Fatalf("the replay did not run with the rule off: %+v", res)
			}
			continue
		}
		if res.OK || res.Code != CodeNotRun || after.runs.Load() != 0 {
			t.Fatalf("a request recorded before the restart: %+v, %d runs", res, after.runs.Load())
		}
	}
}

// A device whose clock runs behind the host's is refused as stale just
// after the host starts (its stamp is before the start): the refusal
// carries the host's clock, and the caller stamps the request again with
// it, once. It did not run the first time, so running it then is safe.
func TestACallerBehindTheHostsClockIsStampedAgain(t *testing.T) {
	th := newTestHost(t)
	th.grants.set(phone.ID, trust.View)
	th.Host.started = time.Now()
	k := testKey()
	in, out := LANAAD(phone.ID, "host"), LANAAD(phone.ID, "device")
	var c *Caller
	c = NewCaller(CallerOptions{
		Seal: func(plain []byte) string { return Seal(k, plain, in) },
		Open: func(body string) ([]byte, error) { return Open(k, body, out) },
		Now:  func() time.Time { return time.Now().Add(-10 * time.Second) },
		Send: func(ctx context.Context, ref, body string) error {
			answer, err := th.HandleSealed(ctx, phone, k, in, out, body)
			if err != nil {
				return err
			}
			go c.Deliver(answer)
			return nil
		},
	})
	got, err := c.Call(context.Background(), "test.slow", nil)
	if err != nil || string(got) != `"slow"` {
		t.Fatalf("a caller 10 s behind the host: %s %v", got, err)
	}
}
