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
// A batch is a line per call inside it (with its place in the batch), then
// the batch's own line: the calls say what ran, the batch's line what the
// device sent and how that ended, which the calls cannot say (a batch whose
// answers were too large together is refused whole after each call ran; one
// with too many calls, or from a device with no grant, runs none).
//
// Requests refused before dispatch (stale, replayed, one too many) are not a
// line each: a flood of them would push every real line out through
// rotation. They are counted per device, kind and minute, and written as one
// record with the count when the minute ends (or the log closes), so a flood
// of any size costs at most maxRefusedDevices+1 records per kind a minute.
//
// What one device can make the log write in full is bounded too: deviceBurst
// lines, then deviceRate a minute. Past that its lines are counted per
// device, outcome code and minute like the refusals (kind "excess"). At
// that rate the rotated files hold over a week of one device's worst (the
// arithmetic is at deviceRate), where without it a device making cheap
// calls pushed every older line out in 17 minutes.
//
// Rotation keeps logKeep files and drops the oldest. The file it starts
// begins with a rotation record (kind "rotated") saying what has been
// dropped so far: how many lines in how many files, from when to when, and
// the hash of the last line dropped, which is the prev of the first line
// kept. A reader holds the first kept line to it, so lines rotated out show
// as dropped, while a rotated file deleted, or the first lines of one cut,
// shows as a broken chain.
//
// Known limits: the newest lines can be cut from the end of requests.log
// without a trace in the chain (no line follows them to carry their hash);
// the chain has no key, so someone who can write the state folder and
// rewrites every line after an edit is not caught. Devices are budgeted
// apart up to maxBudgetDevices at once; a relay that invents devices (each
// refused: it has no grant) can make each write its budget, so the bound
// for a week is one device's, not a thousand's.

const (
	logName = "requests.log"
	// logMax and logKeep bound the log on disk: at most (logKeep+1)×logMax
	// (288 MiB), of which the rotated files keep logKeep×logMax (256 MiB).
	logMax    = 32 << 20
	logKeep   = 8       // rotated files kept: requests.log.1 .. .8
	maxLogRec = 4 << 10 // a line longer than this is not one of ours
	// maxRefusedDevices bounds the devices counted apart in one minute's
	// refusals and excess; the rest are counted together as othersDevice.
	maxRefusedDevices = 1000
	othersDevice      = "others"

	// deviceBurst and deviceRate bound the lines one device can make the
	// log write in full: deviceBurst at once (a batch is up to MaxBatch+1
	// lines), then deviceRate a minute. One device's worst minute is then
	// deviceRate lines, one excess count per outcome code (10) and one
	// refusal count per kind (3): 33 lines of at most 720 bytes (a 128-byte
	// id, a 100-character method and a 64-character target that all need
	// escaping), 23.8 KB a minute, 228 MiB a week: inside the 256 MiB the
	// rotated files keep. TestRetentionOutlastsADeviceForAWeek checks it.
	deviceBurst = 600
	deviceRate  = 20
	// maxBudgetDevices bounds the budgets held at once; past it, buckets
	// that are full again are forgotten, and a new device shares one.
	maxBudgetDevices = 1000
)

// Kinds of refusal before dispatch: an aggregated record's code.
const (
	RefusedBusy   = "BUSY"   // the device had too much in flight, or too many nonces in the window
	RefusedStale  = "STALE"  // the timestamp was out of the window
	RefusedReplay = "REPLAY" // the nonce was seen inside the window
)

// Kinds of line other than a request or a refusal count.
const (
	// KindExcess is a count of a device's requests past its budget in a
	// minute, with one outcome code.
	KindExcess = "excess"
	// KindRotated is the record a rotation starts a file with.
	KindRotated = "rotated"
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
	// Batch, when set, is the line of a call inside a batch: its place
	// (1 to MaxBatch). The batch's own line follows its calls.
	Batch int `json:"batch,omitempty"`
	// Kind is "" for a request or a count of refusals, KindExcess or
	// KindRotated.
	Kind string `json:"kind,omitempty"`
	// Count, when set, makes this an aggregated record: Count requests of
	// Device refused before dispatch with Code in the minute from Time
	// (Kind ""), or past its budget and answered Code (KindExcess).
	Count int64 `json:"count,omitempty"`
	// Dropped is a rotation record's: what rotation has removed so far.
	Dropped *Dropped `json:"dropped,omitempty"`
	Prev    string   `json:"prev"` // SHA-256 of the previous line, hex
}

// Dropped is what rotation has removed from the log so far.
type Dropped struct {
	Lines int64     `json:"lines"`
	Files int64     `json:"files"`
	From  time.Time `json:"from"` // the time on the first line dropped
	To    time.Time `json:"to"`   // the time on the last line dropped
	// Last is the SHA-256 of the last line dropped: the prev of the first
	// line kept ("" while nothing was dropped).
	Last string `json:"last"`
}

// RequestLog appends to the log.
type RequestLog struct {
	mu      sync.Mutex
	dir     string
	f       *os.File
	size    int64
	max     int64 // logMax; tests make it small
	prev    string
	dropped Dropped // what rotation removed so far
	now     func() time.Time
	counted *countedMinute // this minute's refusals and excess, nil when none
	flush   *time.Timer    // writes them when the minute ends
	budgets map[string]*budget
	others  budget // shared past maxBudgetDevices

	// budgetOffForTest writes every line, as before the budget: a test
	// shows a device rotating the log out with it.
	budgetOffForTest bool
	// batchCallsOffForTest leaves a batch's calls out, as before: only the
	// batch's own line is written.
	batchCallsOffForTest bool
	// rotationRecordOffForTest starts a rotated file without its record,
	// as before.
	rotationRecordOffForTest bool
}

// countedMinute counts one minute's refusals before dispatch and lines
// past a device's budget.
type countedMinute struct {
	start time.Time
	count map[countedKey]int64
	order []countedKey      // first seen first, so records come out in a stable order
	fp    map[string]string // device -> the first fingerprint seen this minute
}

// countedKey is a refusal (kind "", code RefusedX) or an excess (kind
// KindExcess, code the outcome).
type countedKey struct{ device, kind, code string }

// OpenRequestLog opens (creating it) the log in the state folder dir.
func OpenRequestLog(dir string) (*RequestLog, error) {
	l := &RequestLog{dir: dir, now: time.Now, max: logMax, budgets: map[string]*budget{}}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func logPath(dir string, i int) string {
	if i == 0 {
		return filepath.Join(dir, logName)
	}
	return filepath.Join(dir, logName+"."+strconv.Itoa(i))
}

func (l *RequestLog) path(i int) string { return logPath(l.dir, i) }

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
	if d := rotationRecord(f); d != nil {
		l.dropped = *d
	}
	return nil
}

// lastLine is a file's last line (at most maxLogRec), nil for none.
func lastLine(f *os.File) []byte {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil
	}
	from := max(st.Size()-2*maxLogRec, 0)
	tail := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(tail, from); err != nil && err != io.EOF {
		return nil
	}
	tail = bytes.TrimRight(tail, "\n")
	if i := bytes.LastIndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return tail
}

// firstLine is a file's first line (at most maxLogRec), nil for none.
func firstLine(f *os.File) []byte {
	head := make([]byte, maxLogRec+1)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil
	}
	head = head[:n]
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	return head
}

// lastLineHash is the hash of a file's last line, "" for none.
func lastLineHash(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if line := lastLine(f); len(line) > 0 {
		return lineHash(line)
	}
	return ""
}

// rotationRecord is what f's first line says was dropped, nil when it is
// not a rotation record.
func rotationRecord(f *os.File) *Dropped {
	var e LogEntry
	if json.Unmarshal(firstLine(f), &e) != nil || e.Kind != KindRotated || e.Dropped == nil {
		return nil
	}
	return e.Dropped
}

func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Append writes one entry, chained to the last (after the counts of a
// minute that has ended, so the log stays in time order). Past the
// device's budget the entry is counted instead (KindExcess).
func (l *RequestLog) Append(e LogEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if err := l.endMinute(now); err != nil {
		return err
	}
	if !l.budgetOffForTest && !l.budgetOf(e.Device, now).take(now) {
		return l.countLocked(now, countedKey{e.Device, KindExcess, e.Code}, e.Fingerprint)
	}
	return l.appendLocked(e)
}

// endMinute writes the counts of a minute that has ended.
func (l *RequestLog) endMinute(now time.Time) error {
	if l.counted != nil && !l.counted.start.Equal(minuteOf(now)) {
		return l.flushLocked()
	}
	return nil
}

// appendLocked writes e, rotating first when it would not fit.
func (l *RequestLog) appendLocked(e LogEntry) error {
	if l.f == nil {
		return errLogClosed
	}
	line, err := l.chained(e)
	if err != nil {
		return err
	}
	if l.size > 0 && l.size+int64(len(line))+1 > l.max {
		if err := l.rotate(); err != nil {
			return err
		}
		if line, err = l.chained(e); err != nil {
			return err
		}
	}
	return l.write(line)
}

// chained is e as a line, carrying the hash of the line before. HTML is not
// escaped, so a method of '<' costs the log one byte, not six.
func (l *RequestLog) chained(e LogEntry) ([]byte, error) {
	e.Prev = l.prev
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (l *RequestLog) write(line []byte) error {
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("request log: %w", err)
	}
	l.size += int64(len(line)) + 1
	l.prev = lineHash(line)
	return nil
}

// rotate moves each file one up, dropping requests.log.logKeep, and starts
// requests.log with the rotation record: what has been dropped so far,
// ending in the hash of the line the first kept line follows. A file that
// cannot be read is dropped unmeasured, and the chain then reads as broken
// there, which it is: lines went that nothing accounts for.
func (l *RequestLog) rotate() error {
	gone, _ := measure(l.path(logKeep))
	if err := l.f.Close(); err != nil {
		return err
	}
	for i := logKeep; i >= 1; i-- {
		_ = os.Rename(l.path(i-1), l.path(i))
	}
	f, err := os.OpenFile(l.path(0), os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		l.f = nil
		return fmt.Errorf("request log: %w", err)
	}
	l.f, l.size = f, 0
	l.dropped.add(gone)
	if l.rotationRecordOffForTest {
		return nil
	}
	d := l.dropped
	line, err := l.chained(LogEntry{Time: l.now().UTC(), Kind: KindRotated, Dropped: &d})
	if err != nil {
		return err
	}
	return l.write(line)
}

// span is one rotated file as it is dropped.
type span struct {
	lines    int64
	from, to time.Time
	last     string // hash of its last line
}

// measure reads the file about to be dropped: its lines, first and last
// times, and last line's hash. A missing file is an empty span. It reads
// at most the file, once, in fixed-size pieces.
func measure(path string) (span, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return span{}, nil
	}
	if err != nil {
		return span{}, err
	}
	defer f.Close()
	last := lastLine(f)
	if last == nil {
		return span{}, nil
	}
	s := span{from: timeOf(firstLine(f)), to: timeOf(last), last: lineHash(last)}
	if rotationRecord(f) != nil {
		s.lines-- // the file's own record is not a line a device made
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		s.lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if err == io.EOF {
			break
		}
		if err != nil {
			return span{}, err
		}
	}
	return s, nil
}

func timeOf(line []byte) time.Time {
	var e struct {
		Time time.Time `json:"time"`
	}
	_ = json.Unmarshal(line, &e)
	return e.Time
}

// add counts a dropped file in.
func (d *Dropped) add(s span) {
	if s.last == "" {
		return
	}
	if d.Files == 0 {
		d.From = s.from
	}
	d.Lines += s.lines
	d.Files++
	d.To, d.Last = s.to, s.last
}

// budget is one device's bucket of lines: deviceBurst at most, refilled at
// deviceRate a minute.
type budget struct {
	tokens float64
	last   time.Time
}

// refill adds what the time since the last refill earned; a clock set back
// earns nothing, then or later.
func (b *budget) refill(now time.Time) {
	switch {
	case b.last.IsZero():
		b.tokens = deviceBurst
	case now.After(b.last):
		b.tokens = min(deviceBurst, b.tokens+now.Sub(b.last).Minutes()*deviceRate)
	default:
		return
	}
	b.last = now
}

// take spends one line, or reports there is none left.
func (b *budget) take(now time.Time) bool {
	b.refill(now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// budgetOf is device's budget. Past maxBudgetDevices, the budgets full
// again are forgotten (a new one starts full, so nothing is lost), and if
// none is, the device shares one with every other such device.
func (l *RequestLog) budgetOf(device string, now time.Time) *budget {
	if b, ok := l.budgets[device]; ok {
		return b
	}
	if len(l.budgets) >= maxBudgetDevices {
		for id, b := range l.budgets {
			if b.refill(now); b.tokens >= deviceBurst {
				delete(l.budgets, id)
			}
		}
		if len(l.budgets) >= maxBudgetDevices {
			return &l.others
		}
	}
	b := &budget{}
	l.budgets[device] = b
	return b
}

// Refused counts one request of device refused before dispatch, of kind
// (RefusedBusy, RefusedStale, RefusedReplay). Nothing is written until the
// minute ends: then one record per device and kind carries the count.
func (l *RequestLog) Refused(device, fingerprint, kind string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.countLocked(l.now(), countedKey{device, "", kind}, fingerprint)
}

// countLocked counts k in now's minute, to be written when it ends.
func (l *RequestLog) countLocked(now time.Time, k countedKey, fingerprint string) error {
	if l.f == nil {
		return errLogClosed
	}
	if err := l.endMinute(now); err != nil {
		return err
	}
	if l.counted == nil {
		start := minuteOf(now)
		l.counted = &countedMinute{start: start, count: map[countedKey]int64{}, fp: map[string]string{}}
		l.armFlush(start)
	}
	l.counted.add(k, fingerprint)
	return nil
}

// add counts one; past maxRefusedDevices devices in the minute, a new
// device counts as othersDevice, so memory and records stay bounded
// whatever ids arrive.
func (m *countedMinute) add(k countedKey, fingerprint string) {
	if _, seen := m.fp[k.device]; !seen {
		if len(m.fp) >= maxRefusedDevices {
			k.device, fingerprint = othersDevice, ""
		}
		if _, seen := m.fp[k.device]; !seen {
			m.fp[k.device] = fingerprint
		}
	}
	if m.count[k] == 0 {
		m.order = append(m.order, k)
	}
	m.count[k]++
}

// armFlush writes the minute's counts once it ends, even if nothing else
// is logged after it.
func (l *RequestLog) armFlush(start time.Time) {
	wait := start.Add(time.Minute).Sub(l.now())
	l.flush = time.AfterFunc(max(wait, 0), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.counted != nil && l.counted.start.Equal(start) && l.f != nil {
			_ = l.flushLocked() // a failed write leaves the counts for the next try
		}
	})
}

// flushLocked writes the pending minute's records, chained as any line.
func (l *RequestLog) flushLocked() error {
	m := l.counted
	if m == nil {
		return nil
	}
	if l.flush != nil {
		l.flush.Stop()
		l.flush = nil
	}
	for i, k := range m.order {
		e := LogEntry{Time: m.start, Device: k.device, Fingerprint: m.fp[k.device], Kind: k.kind, Code: k.code, Count: m.count[k]}
		if err := l.appendLocked(e); err != nil {
			m.order = m.order[i:] // keep what was not written
			return err
		}
	}
	l.counted = nil
	return nil
}

func minuteOf(t time.Time) time.Time { return t.UTC().Truncate(time.Minute) }

// Close writes the pending counts and closes the log file.
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

// logLine writes dev's line for a request, or with call > 0 for the call at
// that place in a batch. Method and target are the device's words: one that
// is not short printable text is written "?".
func (h *Host) logLine(dev Device, unsafeMethod, unsafeTarget, code string, took time.Duration, call int) {
	l := h.o.Log
	if l == nil || call > 0 && l.batchCallsOffForTest {
		return
	}
	method, target := unsafeMethod, unsafeTarget
	if !printable(method, 1, maxMethod) {
		method = "?"
	}
	if !printable(target, 0, 64) {
		target = "?"
	}
	e := LogEntry{Time: h.now().UTC(), Device: dev.ID, Fingerprint: dev.Fingerprint, Method: method,
		Target: target, Code: code, MS: took.Milliseconds(), Batch: call}
	if dev.Desktop {
		e.Device = "desktop"
	}
	if err := l.Append(e); err != nil {
		h.o.Logger.Error("request log", "err", err)
	}
}

// ErrChainBroken says a line's prev does not match the line before it: the
// log was cut or edited there.
var ErrChainBroken = errors.New("request log: the hash chain is broken")

// LogReader reads the log oldest line first and checks the chain as it
// goes: each line against the one before it, across the files, and the
// first line kept against what the newest file's rotation record says was
// dropped. Its memory is one line; the files are opened together at the
// start, so a rotation while it reads moves nothing under it, and a line
// still being written at the end is not read.
type LogReader struct {
	files   []*os.File // oldest first
	sc      *bufio.Scanner
	dropped *Dropped
	prev    string
	started bool
	n       int // entries returned
	broken  int
	err     error

	// startUncheckedForTest takes the first line kept on trust, as before
	// rotation records: a test shows a deleted rotated file passing.
	startUncheckedForTest bool
}

// OpenLog opens the log in the state folder dir for reading. A log that
// does not exist reads as empty.
func OpenLog(dir string) (*LogReader, error) {
	files, err := openSettled(dir)
	if err != nil {
		return nil, err
	}
	r := &LogReader{broken: -1}
	for _, f := range files {
		if f != nil {
			r.files = append(r.files, f)
		}
	}
	for i := len(r.files) - 1; i >= 0; i-- {
		if st, err := r.files[i].Stat(); err == nil && st.Size() > 0 {
			r.dropped = rotationRecord(r.files[i])
			break
		}
	}
	return r, nil
}

// errLogMoving says the log rotated under every try to open it.
var errLogMoving = errors.New("request log: it rotated while being opened; try again")

// openSettled opens the files of the log as they stand. A rotation renames
// one file at a time, then starts requests.log and writes its record: a
// file missing between two present ones, or requests.log missing or still
// empty beside requests.log.1, is a rotation under way, and a name that is
// another file after the opens is one that happened during them. Either
// way it opens them again, a few times; a gap that stays is read as it is
// (a file deleted: the chain will not verify, and should not).
func openSettled(dir string) ([]*os.File, error) {
	for try := 1; ; try++ {
		files, err := openLogFiles(dir)
		if err != nil {
			return nil, err
		}
		still := stillLogFiles(dir, files)
		if still && (whole(files) || try >= 10) {
			return files, nil
		}
		closeAll(files)
		if try >= 10 {
			return nil, errLogMoving
		}
		time.Sleep(time.Duration(try) * time.Millisecond)
	}
}

// whole reports whether the files, oldest first, have no gap and end in a
// requests.log that has its first line.
func whole(files []*os.File) bool {
	seen := false
	for _, f := range files {
		if f == nil && seen {
			return false
		}
		seen = seen || f != nil
	}
	current := files[len(files)-1]
	if current == nil {
		return !seen
	}
	st, err := current.Stat()
	return err == nil && (st.Size() > 0 || files[len(files)-2] == nil)
}

// openLogFiles opens requests.log.logKeep .. requests.log, nil for one
// that does not exist.
func openLogFiles(dir string) ([]*os.File, error) {
	var files []*os.File
	for i := logKeep; i >= 0; i-- {
		f, err := os.Open(logPath(dir, i))
		if errors.Is(err, os.ErrNotExist) {
			files = append(files, nil)
			continue
		}
		if err != nil {
			closeAll(files)
			return nil, fmt.Errorf("request log: %w", err)
		}
		files = append(files, f)
	}
	return files, nil
}

// stillLogFiles reports whether each name still is the file opened.
func stillLogFiles(dir string, files []*os.File) bool {
	for j, f := range files {
		st, err := os.Stat(logPath(dir, logKeep-j))
		if f == nil {
			if !errors.Is(err, os.ErrNotExist) {
				return false
			}
			continue
		}
		fst, ferr := f.Stat()
		if err != nil || ferr != nil || !os.SameFile(st, fst) {
			return false
		}
	}
	return true
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// Dropped is what rotation removed before the first line kept, nil when
// nothing was.
func (r *LogReader) Dropped() *Dropped {
	if r.dropped == nil || r.dropped.Files == 0 {
		return nil
	}
	return r.dropped
}

// Next returns the next entry, oldest first, or false at the end. Rotation
// records are checked but not returned.
func (r *LogReader) Next() (LogEntry, bool) {
	for {
		if r.sc == nil {
			if len(r.files) == 0 {
				return LogEntry{}, false
			}
			r.sc = bufio.NewScanner(r.files[0])
			r.sc.Buffer(make([]byte, maxLogRec), maxLogRec)
			r.sc.Split(splitLines(len(r.files) == 1))
		}
		if !r.sc.Scan() {
			if err := r.sc.Err(); err != nil {
				r.breaks() // a line too long is not one of ours; the rest of the file is skipped
				if !errors.Is(err, bufio.ErrTooLong) && r.err == nil {
					r.err = fmt.Errorf("request log: %w", err)
				}
			}
			r.files[0].Close()
			r.files, r.sc = r.files[1:], nil
			continue
		}
		e, ok := r.check(r.sc.Bytes())
		if ok && e.Kind != KindRotated {
			r.n++
			return e, true
		}
	}
}

// splitLines splits at each newline and keeps the bytes as written (a line
// hashes as it is on disk). At the end of the newest file, bytes with no
// newline yet are a line being written: they are left for the next read.
func splitLines(newest bool) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		switch {
		case !atEOF || len(data) == 0:
			return 0, nil, nil
		case newest:
			return len(data), nil, nil
		}
		return len(data), data, nil
	}
}

// check holds one line to the chain and decodes it.
func (r *LogReader) check(line []byte) (LogEntry, bool) {
	var e LogEntry
	err := json.Unmarshal(line, &e)
	want := r.prev
	if !r.started && r.dropped != nil {
		want = r.dropped.Last
	}
	if err != nil || e.Prev != want && (r.started || !r.startUncheckedForTest) {
		r.breaks()
	}
	r.prev, r.started = lineHash(line), true
	return e, err == nil
}

// breaks marks the chain broken before the next entry, if not already.
func (r *LogReader) breaks() {
	if r.broken < 0 {
		r.broken = r.n
	}
}

// Broken is the index of the first entry that does not follow from the
// line before it, -1 while the chain holds.
func (r *LogReader) Broken() int { return r.broken }

// Err is a read error, or ErrChainBroken, or nil.
func (r *LogReader) Err() error {
	if r.err != nil {
		return r.err
	}
	if r.broken >= 0 {
		return ErrChainBroken
	}
	return nil
}

// Close closes the files not yet read.
func (r *LogReader) Close() error {
	closeAll(r.files)
	r.files, r.sc = nil, nil
	return nil
}

// ReadLog reads every entry, oldest first, and verifies the chain. It
// returns the entries it read and, when the chain is broken, the index of
// the first entry that does not follow from the one before. It holds the
// whole log in memory: gatehouse log reads with OpenLog instead.
func ReadLog(dir string) ([]LogEntry, int, error) {
	r, err := OpenLog(dir)
	if err != nil {
		return nil, -1, err
	}
	defer r.Close()
	var out []LogEntry
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		out = append(out, e)
	}
	return out, r.Broken(), r.Err()
}
