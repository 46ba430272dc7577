package rpc

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// clock is a settable time for the request log.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

func openTestLog(t *testing.T, c *clock) (*RequestLog, string) {
	t.Helper()
	dir := t.TempDir()
	l, err := OpenRequestLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.now = c.now
	return l, dir
}

// A burst of 1,000 replayed frames is in the request log as one record
// with its count, written when the minute ends, and the chain verifies.
// Before, a request refused before dispatch left no trace at all.
func TestRefusedBeforeDispatchAreLoggedPerMinute(t *testing.T) {
	minute := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	c := &clock{t: minute.Add(10 * time.Second)}
	l, dir := openTestLog(t, c)
	th := newTestHost(t)
	th.o.Log = l
	th.grants.set(phone.ID, trust.View)
	k := testKey()
	in, out := LANAAD(phone.ID, "host"), LANAAD(phone.ID, "device")
	plain, _ := json.Marshal(req("test.slow", "{}"))
	body := Seal(k, plain, in)
	for range 1001 { // the first runs, the next 1,000 are replays
		if _, err := th.HandleSealed(context.Background(), phone, k, in, out, body); err != nil {
			t.Fatal(err)
		}
	}
	stale := req("test.slow", "{}")
	stale.TS -= 120_000
	sp, _ := json.Marshal(stale)
	if _, err := th.HandleSealed(context.Background(), phone, k, in, out, Seal(k, sp, in)); err != nil {
		t.Fatal(err)
	}
	// Inside the minute only the request that ran is written.
	if entries, _, err := ReadLog(dir); err != nil || len(entries) != 1 || entries[0].Code != "OK" {
		t.Fatalf("inside the minute: %+v %v", entries, err)
	}
	// The next minute's first refusal writes the last minute's records.
	c.set(minute.Add(70 * time.Second))
	th.HandleSealed(context.Background(), phone, k, in, out, body)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, broken, err := ReadLog(dir)
	if err != nil || broken >= 0 {
		t.Fatalf("chain: broken at %d, %v", broken, err)
	}
	want := []struct {
		code  string
		count int64
		at    time.Time
	}{{"OK", 0, time.Time{}}, {RefusedReplay, 1000, minute}, {RefusedStale, 1, minute}, {RefusedReplay, 1, minute.Add(time.Minute)}}
	if len(entries) != len(want) {
		t.Fatalf("%d entries: %+v", len(entries), entries)
	}
	for i, w := range want {
		e := entries[i]
		if e.Code != w.code || e.Count != w.count || (w.count > 0 && (!e.Time.Equal(w.at) || e.Device != phone.ID || e.Fingerprint != fpOf)) {
			t.Errorf("entry %d: %+v, want %s ×%d at %s", i, e, w.code, w.count, w.at)
		}
	}
	if st, _ := os.Stat(dir + "/" + logName); st.Size() > 4<<10 {
		t.Fatalf("1,002 refusals took %d bytes of log", st.Size())
	}
}

// Past maxRefusedDevices distinct devices in a minute, the rest share one
// "others" record: a minute's records are bounded whatever ids arrive.
func TestRefusedRecordsAreBoundedPerMinute(t *testing.T) {
	minute := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	c := &clock{t: minute}
	l, dir := openTestLog(t, c)
	for i := range maxRefusedDevices + 5 {
		for range 2 {
			if err := l.Refused("dev-"+strconv.Itoa(i), "", RefusedBusy); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, broken, err := ReadLog(dir)
	if err != nil || broken >= 0 || len(entries) != maxRefusedDevices+1 {
		t.Fatalf("%d entries, broken %d, %v", len(entries), broken, err)
	}
	if last := entries[len(entries)-1]; last.Device != othersDevice || last.Count != 10 || last.Code != RefusedBusy {
		t.Fatalf("the others record: %+v", last)
	}
}

// A minute's refusals are written when it ends even if nothing else is
// logged after them.
func TestRefusedRecordsAreFlushedAtTheMinute(t *testing.T) {
	minute := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	c := &clock{t: minute.Add(time.Minute - 50*time.Millisecond)}
	l, dir := openTestLog(t, c)
	defer l.Close()
	if err := l.Refused("phone-1", fpOf, RefusedStale); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, _, _ := ReadLog(dir)
		if len(entries) == 1 && entries[0].Count == 1 && entries[0].Code == RefusedStale {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not flushed at the minute: %+v", entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkRefused is the cost of counting one refusal (a flood's price).
func BenchmarkRefused(b *testing.B) {
	l, err := OpenRequestLog(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		_ = l.Refused("phone-1", fpOf, RefusedReplay)
	}
}
