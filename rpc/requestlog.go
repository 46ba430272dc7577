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

const (
	logName   = "requests.log"
	logMax    = 8 << 20 // rotate past this
	logKeep   = 3       // rotated files kept: requests.log.1 .. .3
	maxLogRec = 4 << 10 // a line longer than this is not one of ours
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
	Prev        string    `json:"prev"` // SHA-256 of the previous line, hex
}

// RequestLog appends to the log.
type RequestLog struct {
	mu   sync.Mutex
	dir  string
	f    *os.File
	size int64
	prev string
}

// OpenRequestLog opens (creating it) the log in the state folder dir.
func OpenRequestLog(dir string) (*RequestLog, error) {
	l := &RequestLog{dir: dir}
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

// Append writes one entry, chained to the last.
func (l *RequestLog) Append(e LogEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
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

// Close closes the log file.
func (l *RequestLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

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
