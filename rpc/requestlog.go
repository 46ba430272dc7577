package rpc

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// The request log: one line per device request (time, device and key
// fingerprint, method, target, outcome code, duration; never params, file
// text or diff content), in the state folder, 0600, rotated by size. Each
// line carries the SHA-256 of the line before, across rotations, so a cut or
// an edit shows when the log is read.
//
// Requests refused before dispatch (stale, replayed, one too many) are not a
// line each: a flood of them would push every real line out through
// rotation. They are counted per device, kind and minute, and written as one
// record with the count when the minute ends (or the log closes), so a flood
// of any size costs at most maxRefusedDevices+1 records per kind a minute.

const (
	logName   = "requests.log"
	logMax    = 8 << 20 // rotate past this
	logKeep   = 3       // rotated files kept: requests.log.1 .. .3
	maxLogRec = 4 << 10 // a line longer than this is not one of ours
	// maxRefusedDevices bounds the devices counted apart in one minute's
	// refusals; the rest are counted together as othersDevice.
	maxRefusedDevices = 1000
	othersDevice      = "others"
)

// Kinds of refusal before dispatch: an aggregated record's code.
const (
	RefusedBusy   = "BUSY"   // the device had too much in flight, or too many nonces in the window
	RefusedStale  = "STALE"  // the timestamp was out of the window
	RefusedReplay = "REPLAY" // the nonce was seen inside the window
)

// LogEntry is one line.
type LogEntry struct {
	Time        time.Time `json:"time"`
	Device      string    `json:"device"`
	Fingerprint string    `json:"fp,omitempty"`
	Method      string    `json:"method"`
	Target      string    `json:"target,omitempty"`
	Code        string    `json:"code"` // "OK" or the error code
	MS          int64     `json:"ms"`
	// Count, when set, makes this an aggregated record: Count requests of
	// Device refused before dispatch with Code in the minute from Time.
	Count int64  `json:"count,omitempty"`
	Prev  string `json:"prev"` // SHA-256 of the previous line, hex
}

// RequestLog appends to the log.
type RequestLog struct {
	mu      sync.Mutex
	dir     string
	f       *os.File
	size    int64
	prev    string
	now     func() time.Time
	refused *refusedMinute // this minute's refusals before dispatch, nil when none
	flush   *time.Timer    // writes them when the minute ends
}

// refusedMinute counts one minute's refusals before dispatch.
type refusedMinute struct {
	start time.Time
	count map[refusedKey]int64
	order []refusedKey      // first seen first, so records come out in a stable order
	fp    map[string]string // device -> the first fingerprint seen this minute
}

type refusedKey struct{ device, kind string }

// OpenRequestLog opens (creating it) the log in the state folder dir.
func OpenRequestLog(dir string) (*RequestLog, error) {
	l := &RequestLog{dir: dir, now: time.Now}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *RequestLog) path(i int) string {
	if i == 0 {
		return filepath.Join(l.dir, logName)
	}
	return filepath.Join(l.dir, logName+"."+strconv.Itoa(i))
}

func (l *RequestLog) open() error {
	f, err := os.OpenFile(l.path(0), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("request log: %w", err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("request log: not a regular file")
	}
	l.f, l.size = f, st.Size()
	l.prev = lastLineHash(l.path(0))
	if l.prev == "" {
		l.prev = lastLineHash(l.path(1))
	}
	return nil
}

// lastLineHash is the hash of a file's last line, "" for none.
func lastLineHash(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return ""
	}
	from := max(st.Size()-2*maxLogRec, 0)
	tail := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(tail, from); err != nil && err != io.EOF {
		return ""
	}
	tail = bytes.TrimRight(tail, "\n")
	if i := bytes.LastIndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return lineHash(tail)
}

func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Append writes one entry, chained to the last (after the refusals of a
// minute that has ended, so the log stays in time order).
func (l *RequestLog) Append(e LogEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refused != nil && !l.refused.start.Equal(minuteOf(l.now())) {
		if err := l.flushLocked(); err != nil {
			return err
		}
	}
	return l.appendLocked(e)
}

func (l *RequestLog) appendLocked(e LogEntry) error {
	if l.f == nil {
		return errLogClosed
	}
	e.Prev = l.prev
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if l.size+int64(len(line))+1 > logMax {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("request log: %w", err)
	}
	l.size += int64(len(line)) + 1
	l.prev = lineHash(line)
	return nil
}

func (l *RequestLog) rotate() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	for i := logKeep; i >= 1; i-- {
		_ = os.Rename(l.path(i-1), l.path(i))
	}
	f, err := os.OpenFile(l.path(0), os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("request log: %w", err)
	}
	l.f, l.size = f, 0
	return nil
}

// Refused counts one request of device refused before dispatch, of kind
// (RefusedBusy, RefusedStale, RefusedReplay). Nothing is written until the
// minute ends: then one record per device and kind carries the count.
func (l *RequestLog) Refused(device, fingerprint, kind string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errLogClosed
	}
	start := minuteOf(l.now())
	if l.refused != nil && !l.refused.start.Equal(start) {
		if err := l.flushLocked(); err != nil {
			return err
		}
	}
	if l.refused == nil {
		l.refused = &refusedMinute{start: start, count: map[refusedKey]int64{}, fp: map[string]string{}}
		l.armFlush(start)
	}
	l.refused.add(device, fingerprint, kind)
	return nil
}

// add counts one refusal; past maxRefusedDevices devices in the minute, a
// new device counts as othersDevice, so memory and records stay bounded
// whatever ids arrive.
func (m *refusedMinute) add(device, fingerprint, kind string) {
	if _, seen := m.fp[device]; !seen {
		if len(m.fp) >= maxRefusedDevices {
			device, fingerprint = othersDevice, ""
		}
		if _, seen := m.fp[device]; !seen {
			m.fp[device] = fingerprint
		}
	}
	k := refusedKey{device, kind}
	if m.count[k] == 0 {
		m.order = append(m.order, k)
	}
	m.count[k]++
}

// armFlush writes the minute's refusals once it ends, even if nothing else
// is logged after it.
func (l *RequestLog) armFlush(start time.Time) {
	wait := start.Add(time.Minute).Sub(l.now())
	l.flush = time.AfterFunc(max(wait, 0), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.refused != nil && l.refused.start.Equal(start) && l.f != nil {
			_ = l.flushLocked() // a failed write leaves the counts for the next try
		}
	})
}

// flushLocked writes the pending minute's records, chained as any line.
func (l *RequestLog) flushLocked() error {
	m := l.refused
	if m == nil {
		return nil
	}
	if l.flush != nil {
		l.flush.Stop()
		l.flush = nil
	}
	for i, k := range m.order {
		e := LogEntry{Time: m.start, Device: k.device, Fingerprint: m.fp[k.device], Code: k.kind, Count: m.count[k]}
		if err := l.appendLocked(e); err != nil {
			m.order = m.order[i:] // keep what was not written
			return err
		}
	}
	l.refused = nil
	return nil
}

func minuteOf(t time.Time) time.Time { return t.UTC().Truncate(time.Minute) }

// Close writes the pending refusals and closes the log file.
func (l *RequestLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errLogClosed
	}
	err := l.flushLocked()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

var errLogClosed = errors.New("request log: closed")

// ErrChainBroken says a line's prev does not match the line before it: the
// log was cut or edited there.
var ErrChainBroken = errors.New("request log: the hash chain is broken")

// ReadLog reads every entry, oldest first, and verifies the chain. It
// returns the entries it read and, when the chain is broken, the index of
// the first entry that does not follow from the one before.
func ReadLog(dir string) ([]LogEntry, int, error) {
	l := &RequestLog{dir: dir}
	var out []LogEntry
	broken := -1
	prev := ""
	first := true
	for i := logKeep; i >= 0; i-- {
		f, err := os.Open(l.path(i))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, broken, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, maxLogRec), maxLogRec)
		for sc.Scan() {
			line := sc.Bytes()
			var e LogEntry
			if err := json.Unmarshal(line, &e); err != nil {
				if broken < 0 {
					broken = len(out)
				}
				prev, first = lineHash(line), false
				continue
			}
			if !first && e.Prev != prev && broken < 0 {
				broken = len(out)
			}
			first = false
			prev = lineHash(line)
			out = append(out, e)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			if broken < 0 {
				broken = len(out)
			}
		}
	}
	if broken >= 0 {
		return out, broken, ErrChainBroken
	}
	return out, -1, nil
}
