package rpc

import (
	"strings"
	"testing"
	"time"
)

// The chain runs on across a rotation that a restart interrupted. A serve
// stopped after rotation moved the files up and started an empty
// requests.log, but before it wrote the rotation record, leaves the last
// line in requests.log.1; the next serve chains its first line to that
// line, and the log verifies from end to end. Without that, the writer took
// an empty requests.log as a log with no past, its first line carried
// prev "", and every reader afterwards said the log was cut exactly where
// nothing was: a false alarm that teaches the person to ignore the real one.
func TestChainSurvivesARestartInsideARotation(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	l, dir := openTestLog(t, c)
	l.max = 1 << 10
	l.budgetOffForTest = true
	for i := range 10 {
		c.set(start.Add(time.Duration(i) * time.Minute))
		if err := l.Append(LogEntry{Time: c.now(), Device: "phone-1", Fingerprint: fpOf, Method: "git.status",
			Target: "t1", Code: "OK", MS: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// The rotation, stopped before its record: the real renames and the
	// real empty requests.log, then the process ends.
	l.mu.Lock()
	l.rotationRecordOffForTest = true
	err := l.rotate()
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, logPath(dir, 0)); got != "" {
		t.Fatalf("requests.log after the interrupted rotation: %q, want it empty", got)
	}
	lastBefore := lastLineHash(logPath(dir, 1))
	if lastBefore == "" {
		t.Fatal("requests.log.1 has no line: the test meant the interrupted rotation to have moved one there")
	}

	// The next serve writes a line.
	l2, err := OpenRequestLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	l2.now, l2.budgetOffForTest = c.now, true
	c.set(start.Add(time.Hour))
	if err := l2.Append(LogEntry{Time: c.now(), Device: "phone-1", Fingerprint: fpOf, Method: "git.status",
		Target: "t1", Code: "OK", MS: 10}); err != nil {
		t.Fatal(err)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	first := firstLineOf(t, readFile(t, logPath(dir, 0)))
	if !strings.Contains(first, `"prev":"`+lastBefore+`"`) {
		t.Fatalf("the first line after the restart does not chain to requests.log.1's last line %s: %s", lastBefore, first)
	}

	entries, broken, err := ReadLog(dir)
	if err != nil || broken >= 0 {
		t.Fatalf("the log reads as broken at %d (%v) where nothing was cut", broken, err)
	}
	if len(entries) != 11 {
		t.Fatalf("read %d entries, want 11", len(entries))
	}
	for i, e := range entries {
		if e.MS != int64(i) {
			t.Fatalf("entry %d is %+v", i, e)
		}
	}
}

func firstLineOf(t *testing.T, text string) string {
	t.Helper()
	line, _, _ := strings.Cut(text, "\n")
	if line == "" {
		t.Fatal("requests.log has no line")
	}
	return line
}
