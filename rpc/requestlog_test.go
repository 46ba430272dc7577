package rpc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// Each call inside a batch is a line of its own (device, fingerprint,
// method, target, outcome, duration, place), before the batch's line, and
// a method or target that is not short printable text is written "?".
// Before, only the batch was a line: what it ran was not in the log.
func TestBatchCallsAreLoggedOneByOne(t *testing.T) {
	batch := `{"calls":[{"method":"host.hello"},{"method":"test.read","params":{"target":"t1"}},` +
		`{"method":"nope\u0007"},{"method":"` + strings.Repeat("m", maxMethod+1) + `"},` +
		`{"method":"test.edit","params":{"target":"a b"}}]}`
	run := func(old bool) []LogEntry {
		dir := t.TempDir()
		l, err := OpenRequestLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		l.batchCallsOffForTest = old
		th := newTestHost(t)
		th.o.Log = l
		th.grants.set(phone.ID, trust.View)
		type p struct {
			Target string `json:"target"`
		}
		if err := Register(th.o.Registry, Method{Name: "test.read", Scope: trust.View, Lane: LaneRead, ReadOnly: true},
			func(ctx context.Context, c *Call, _ p) (any, error) { return "read", nil }); err != nil {
			t.Fatal(err)
		}
		if r := th.call("batch", batch); !r.OK {
			t.Fatalf("batch: %+v", r)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		entries, broken, err := ReadLog(dir)
		if err != nil || broken >= 0 {
			t.Fatalf("chain: broken at %d, %v", broken, err)
		}
		return entries
	}
	if entries := run(true); len(entries) != 1 || entries[0].Method != "batch" {
		t.Fatalf("not reproduced: without the calls' lines the log has %+v", entries)
	}
	entries := run(false)
	want := []struct{ method, target, code string }{
		{"host.hello", "", "OK"}, {"test.read", "t1", "OK"}, {"?", "", "UNKNOWN_METHOD"},
		{"?", "", "UNKNOWN_METHOD"}, {"test.edit", "?", "BAD_PARAMS"}, {"batch", "", "OK"},
	}
	if len(entries) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(entries), len(want), entries)
	}
	for i, w := range want {
		e := entries[i]
		place := i + 1
		if w.method == "batch" {
			place = 0
		}
		if e.Method != w.method || e.Target != w.target || e.Code != w.code || e.Batch != place ||
			e.Device != phone.ID || e.Fingerprint != fpOf {
			t.Errorf("line %d: %+v, want %s %q %s at place %d", i, e, w.method, w.target, w.code, place)
		}
	}
}

// One device making cheap calls as fast as it can no longer pushes older
// lines out of the log: past its budget its lines are counted per minute,
// and nothing it did is lost. Before, 10,000 calls of a view device in
// three minutes rotated out another device's line (the black-box attack's
// 17 minutes, at this test's file size).
func TestOneDeviceCannotRotateTheLogOut(t *testing.T) {
	const calls = 10_000
	run := func(old bool) ([]LogEntry, *Dropped) {
		start := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
		c := &clock{t: start}
		l, dir := openTestLog(t, c)
		l.max = 64 << 10 // the rotated files keep 512 KiB
		l.budgetOffForTest = old
		th := newTestHost(t)
		th.o.Log = l
		th.grants.set(phone.ID, trust.View)
		other := Device{ID: "laptop-1", Fingerprint: fpOf}
		th.grants.set(other.ID, trust.View)
		th.Handle(t.Context(), other, req("test.slow", `{}`))
		for i := range calls {
			c.set(start.Add(time.Duration(i) * 20 * time.Millisecond))
			th.call("host.hello", `{}`)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := OpenLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var entries []LogEntry
		for e, ok := r.Next(); ok; e, ok = r.Next() {
			entries = append(entries, e)
		}
		if r.Err() != nil {
			t.Fatalf("old %v: %v at %d", old, r.Err(), r.Broken())
		}
		return entries, r.Dropped()
	}
	if entries, dropped := run(true); entries[0].Device == "laptop-1" || dropped == nil {
		t.Fatalf("not reproduced: the other device's line is still first (%+v), dropped %+v", entries[0], dropped)
	}
	entries, dropped := run(false)
	if entries[0].Device != "laptop-1" || dropped != nil {
		t.Fatalf("the other device's line was rotated out: first %+v, dropped %+v", entries[0], dropped)
	}
	full, counted := 0, int64(0)
	for _, e := range entries[1:] {
		switch {
		case e.Kind == KindExcess && e.Device == phone.ID && e.Code == "OK":
			counted += e.Count
		case e.Kind == "" && e.Count == 0 && e.Method == "host.hello":
			full++
		default:
			t.Fatalf("unexpected line %+v", e)
		}
	}
	minutes := calls * 20 * time.Millisecond / time.Minute
	if limit := deviceBurst + deviceRate*int(minutes+1); full > limit || int64(full)+counted != calls {
		t.Fatalf("%d lines in full (at most %d) and %d counted, want %d in all", full, limit, counted, calls)
	}
}

// The arithmetic behind the bounds: the longest line a device can make,
// times what one device can make the log write in a week at its budget,
// fits in what the rotated files keep.
func TestRetentionOutlastsADeviceForAWeek(t *testing.T) {
	l := &RequestLog{prev: strings.Repeat("f", 64)}
	when := time.Date(2026, 11, 30, 22, 0, 0, 123456789, time.UTC)
	longest := 0
	for _, e := range []LogEntry{
		{Time: when, Device: strings.Repeat("d", 128), Fingerprint: fpOf, Method: strings.Repeat(`"`, maxMethod),
			Target: strings.Repeat(`\`, 64), Code: string(CodeUnknownMethod), MS: 1e9, Batch: MaxBatch},
		{Time: when, Device: strings.Repeat("d", 128), Fingerprint: fpOf, Kind: KindExcess,
			Code: string(CodeUnknownMethod), Count: 1 << 62},
	} {
		line, err := l.chained(e)
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, len(line)+1)
	}
	codes := []Code{"OK", CodeNotRun, CodeAccess, CodeSwitch, CodeRefused, CodeConflict, CodeBusy,
		CodeBadParams, CodeUnknownMethod, CodeInternal}
	refusals := 3 // RefusedBusy, RefusedStale, RefusedReplay
	perMinute := deviceRate + len(codes) + refusals
	week := int64(7 * 24 * 60)
	written := int64(longest) * (deviceBurst + week*int64(perMinute))
	kept := int64(logKeep) * logMax
	t.Logf("longest line %d bytes; %d lines a minute; a week %.1f MiB; kept %d MiB", longest, perMinute,
		float64(written)/(1<<20), kept>>20)
	if longest > 720 || perMinute != 33 {
		t.Errorf("the arithmetic in requestlog.go's comment is out of date: %d-byte lines, %d a minute", longest, perMinute)
	}
	if written > kept {
		t.Fatalf("one device at its budget rotates a line out within a week: %d bytes > %d kept", written, kept)
	}
}

// writeRotated writes n request lines to a log whose files hold about
// four lines, a minute apart from start, so that older files are rotated
// out. It returns the folder and each line's time.
func writeRotated(t *testing.T, n int, old bool) (string, []time.Time) {
	t.Helper()
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	l, dir := openTestLog(t, c)
	l.max = 1 << 10
	l.budgetOffForTest = true
	l.rotationRecordOffForTest = old
	var times []time.Time
	for i := range n {
		at := start.Add(time.Duration(i) * time.Minute)
		c.set(at)
		times = append(times, at)
		e := LogEntry{Time: at, Device: "phone-1", Fingerprint: fpOf, Method: "git.status", Target: "t1", Code: "OK", MS: int64(i)}
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, times
}

// readAll reads the log in dir, the old way (the first line kept on trust)
// or the new.
func readAll(t *testing.T, dir string, old bool) ([]LogEntry, *Dropped, int) {
	t.Helper()
	r, err := OpenLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.startUncheckedForTest = old
	var entries []LogEntry
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		entries = append(entries, e)
	}
	if err := r.Err(); err != nil && !errors.Is(err, ErrChainBroken) {
		t.Fatal(err)
	}
	return entries, r.Dropped(), r.Broken()
}

// Lines rotated out are reported as dropped (how many, in how many files,
// from when to when), and the chain verifies from the first line kept.
// Before, the log silently started later.
func TestRotationSaysWhatWasDropped(t *testing.T) {
	dir, _ := writeRotated(t, 100, true)
	entries, dropped, broken := readAll(t, dir, true)
	if dropped != nil || broken >= 0 || entries[0].MS == 0 {
		t.Fatalf("not reproduced: dropped %+v, broken %d, first %+v", dropped, broken, entries[0])
	}
	dir, times := writeRotated(t, 100, false)
	entries, dropped, broken = readAll(t, dir, false)
	if broken >= 0 {
		t.Fatalf("natural rotation reads as broken at %d", broken)
	}
	first := int(entries[0].MS) // the place of the first line kept
	if dropped == nil || dropped.Lines != int64(first) || dropped.Files < 2 || !dropped.From.Equal(times[0]) ||
		!dropped.To.Equal(times[first-1]) || len(entries) != 100-first {
		t.Fatalf("dropped %+v, first kept line %d, %d kept", dropped, first, len(entries))
	}
	for i, e := range entries {
		if e.MS != int64(first+i) {
			t.Fatalf("line %d is %+v", i, e)
		}
	}
}

// What was dropped adds up across restarts: the writer takes the count so
// far from the rotation record at the top of requests.log.
func TestDroppedAddsUpAcrossRestarts(t *testing.T) {
	dir, _ := writeRotated(t, 60, false)
	c := &clock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	l, err := OpenRequestLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.now, l.max, l.budgetOffForTest = c.now, 1<<10, true
	for i := range 60 {
		if err := l.Append(LogEntry{Time: c.now(), Device: "phone-1", Method: "git.status", Code: "OK", MS: int64(60 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	entries, dropped, broken := readAll(t, dir, false)
	if broken >= 0 || dropped == nil || dropped.Lines != entries[0].MS || len(entries) != 120-int(entries[0].MS) {
		t.Fatalf("broken %d, dropped %+v, first kept %+v, %d kept", broken, dropped, entries[0], len(entries))
	}
}

// A cut or an edit anywhere in the rotated files shows, including a whole
// rotated file deleted or the first lines of the oldest one cut, which the
// old reader took on trust.
func TestRotatedLogCutOrEditedIsBroken(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, dir string)
		oldSaw bool // the reader before rotation records saw it too
	}{
		{"delete the oldest file", func(t *testing.T, dir string) { remove(t, dir, logKeep) }, false},
		{"cut the oldest file's first lines", func(t *testing.T, dir string) { cutLines(t, dir, logKeep, 0, 2) }, false},
		{"cut the oldest file's record", func(t *testing.T, dir string) { cutLines(t, dir, logKeep, 0, 1) }, false},
		{"delete a middle file", func(t *testing.T, dir string) { remove(t, dir, 4) }, true},
		{"delete requests.log.1", func(t *testing.T, dir string) { remove(t, dir, 1) }, true},
		{"delete every rotated file", func(t *testing.T, dir string) {
			for i := 1; i <= logKeep; i++ {
				remove(t, dir, i)
			}
		}, false},
		{"edit a line in requests.log.2", func(t *testing.T, dir string) { editLine(t, dir, 2, 2) }, true},
		{"edit the last line of requests.log.2", func(t *testing.T, dir string) { editLine(t, dir, 2, -1) }, true},
		{"cut a line in requests.log.2", func(t *testing.T, dir string) { cutLines(t, dir, 2, 1, 2) }, true},
		{"edit what the rotation record says", func(t *testing.T, dir string) {
			p := logPath(dir, 0)
			writeFile(t, p, strings.Replace(readFile(t, p), `"files":`, `"files":1`, 1))
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := writeRotated(t, 100, false)
			if _, _, broken := readAll(t, dir, false); broken >= 0 {
				t.Fatalf("broken at %d before the change", broken)
			}
			c.change(t, dir)
			if _, _, broken := readAll(t, dir, true); (broken >= 0) != c.oldSaw {
				t.Errorf("the old reader: broken at %d", broken)
			}
			if _, _, broken := readAll(t, dir, false); broken < 0 {
				t.Fatal("the chain still verifies")
			}
		})
	}
}

func remove(t *testing.T, dir string, i int) {
	t.Helper()
	if err := os.Remove(logPath(dir, i)); err != nil {
		t.Fatal(err)
	}
}

// cutLines removes lines [from, to) of file i.
func cutLines(t *testing.T, dir string, i, from, to int) {
	t.Helper()
	lines := strings.SplitAfter(readFile(t, logPath(dir, i)), "\n")
	writeFile(t, logPath(dir, i), strings.Join(append(lines[:from:from], lines[to:]...), ""))
}

// editLine changes the duration on line n of file i (-1: its last line).
func editLine(t *testing.T, dir string, i, n int) {
	t.Helper()
	lines := strings.SplitAfter(strings.TrimSuffix(readFile(t, logPath(dir, i)), "\n"), "\n")
	if n < 0 {
		n = len(lines) - 1
	}
	edited := strings.Replace(lines[n], `"ms":`, `"ms":1`, 1)
	if edited == lines[n] {
		t.Fatalf("line %d of file %d has no duration: %s", n, i, lines[n])
	}
	lines[n] = edited
	writeFile(t, logPath(dir, i), strings.Join(lines, "")+"\n")
}

// Reading while the log rotates under the reader never reads as broken:
// the files are opened together (again, when a rotation moved one between
// the opens), and a line being written is not read.
func TestReadingWhileRotating(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenRequestLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.max, l.budgetOffForTest = 8<<10, true
	// The writer rotates every hundred or so lines and stops after many
	// rotations; the reader reads until it has seen the log rotate between
	// two of its reads, or the writer is done. Counted, not timed: on a
	// loaded machine a second of reading saw no rotation at all.
	const lines = 40000
	stop, done := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range lines {
			select {
			case <-stop:
				return
			default:
			}
			if err := l.Append(LogEntry{Time: time.Now(), Device: "phone-1", Method: "git.status", Code: "OK", MS: int64(i)}); err != nil {
				t.Error(err)
				return
			}
			// A rotation every few milliseconds (a real one is every 32
			// MiB): paced, since a log rotating faster than a reader can
			// open its files is read as it stands after ten tries.
			time.Sleep(50 * time.Microsecond)
		}
	})
	defer func() { close(stop); wg.Wait(); l.Close() }()
	var files []int64
	rotated := func() bool { return len(files) >= 2 && files[0] != files[len(files)-1] }
	for reads := 0; reads < 20 || !rotated(); reads++ {
		select {
		case <-done:
			if !rotated() {
				t.Fatalf("the log did not rotate while it was read, in %d reads over %d lines: %v files dropped", reads, lines, files)
			}
		default:
		}
		_, dropped, broken := readAll(t, dir, false)
		if broken >= 0 {
			t.Fatalf("read %d: broken at %d while the log rotated", reads, broken)
		}
		if dropped != nil {
			files = append(files, dropped.Files)
		}
	}
}

// Bytes at the end of requests.log with no newline yet are a line being
// written: they are not read, and the chain holds up to them.
func TestLineBeingWrittenIsNotRead(t *testing.T) {
	dir, _ := writeRotated(t, 20, false)
	p := logPath(dir, 0)
	whole := readFile(t, p)
	writeFile(t, p, whole+`{"time":"2026-11-30T13:00:00Z","device":"pho`)
	entries, _, broken := readAll(t, dir, false)
	if broken >= 0 || entries[len(entries)-1].MS != 19 {
		t.Fatalf("broken at %d; last %+v", broken, entries[len(entries)-1])
	}
	// In a rotated file the same bytes are a line cut short.
	p = logPath(dir, 1)
	writeFile(t, p, readFile(t, p)+`{"time":"2026-11-30T13:00:00Z","device":"pho`)
	if _, _, broken := readAll(t, dir, false); broken < 0 {
		t.Fatal("a line cut short in a rotated file went unnoticed")
	}
}

// A line longer than any of ours ends its file's reading and breaks the
// chain; the reader's memory stays one line.
func TestOverlongLineBreaksTheChain(t *testing.T) {
	dir, _ := writeRotated(t, 10, false)
	p := logPath(dir, 1)
	lines := strings.SplitAfter(readFile(t, p), "\n")
	lines[1] = strings.Repeat("x", 2*maxLogRec) + "\n"
	writeFile(t, p, strings.Join(lines, ""))
	if _, _, broken := readAll(t, dir, false); broken < 0 {
		t.Fatal("an overlong line went unnoticed")
	}
}

// A line is written as the bytes it hashes to, with no HTML escaping (a
// method of '<' costs one byte, not six).
func TestLogLineIsNotHTMLEscaped(t *testing.T) {
	l := &RequestLog{}
	line, err := l.chained(LogEntry{Method: "<&>"})
	if err != nil || !bytes.Contains(line, []byte(`"method":"<&>"`)) {
		t.Fatalf("%s %v", line, err)
	}
}

// Past maxBudgetDevices devices, budgets that are full again are forgotten,
// and when none is, new devices share one: memory stays bounded.
func TestBudgetsAreBounded(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)}
	l, _ := openTestLog(t, c)
	defer l.Close()
	for i := range maxBudgetDevices + 10 {
		if err := l.Append(LogEntry{Device: "dev-" + strconv.Itoa(i), Code: "OK"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.budgets) != maxBudgetDevices || l.others.last.IsZero() {
		t.Fatalf("%d budgets held; others used: %v", len(l.budgets), !l.others.last.IsZero())
	}
	c.set(c.now().Add(time.Hour)) // every budget is full again
	if err := l.Append(LogEntry{Device: "late", Code: "OK"}); err != nil {
		t.Fatal(err)
	}
	if len(l.budgets) != 1 {
		t.Fatalf("%d budgets held after they refilled", len(l.budgets))
	}
}
