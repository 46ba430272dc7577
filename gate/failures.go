package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/internal/refusal"
)

// failure is one of git's usual failures: a message git prints (with LC_ALL=C,
// which the runner forces, so the text does not change with the user's
// locale) and the refusal that tells a person what to do about it.
type failure struct {
	text string
	// stdout: git prints this one on standard output (commit's status
	// listing, push --porcelain's ref lines), not on standard error.
	stdout bool
	err    *refusal.Error
}

// failures is git's wording as of 2.39, each checked against real git in
// TestGitFailureSentences. The first match wins, so the specific messages
// come before the loose ones ("already exists" last: a lock's "File exists"
// is not a branch that exists).
var failures = []failure{
	// No author identity: commit's "Author identity unknown" block, then one
	// of these fatal lines.
	{text: "Please tell me who you are", err: ErrNoIdentity},
	{text: "unable to auto-detect email address", err: ErrNoIdentity},
	{text: "no email was given and auto-detection is disabled", err: ErrNoIdentity},
	{text: "no name was given and auto-detection is disabled", err: ErrNoIdentity},
	{text: "empty ident name", err: ErrNoIdentity},
	// Another git holds a lock: "Unable to create '<path>/index.lock': File exists."
	{text: ".lock': File exists", err: ErrLocked},
	// A push the remote rejected because it has commits this branch lacks.
	{text: "[rejected] (non-fast-forward)", stdout: true, err: ErrPushRejected},
	{text: "[rejected] (fetch first)", stdout: true, err: ErrPushRejected},
	{text: "Updates were rejected because", err: ErrPushRejected},
	// The remote refused the credentials, or there were none to give
	// (GIT_TERMINAL_PROMPT=0 turns the prompt into this failure).
	{text: "Authentication failed for", err: ErrAuthFailed},
	{text: "could not read Username for", err: ErrAuthFailed},
	{text: "could not read Password for", err: ErrAuthFailed},
	{text: "Permission denied (publickey", err: ErrAuthFailed},
	{text: "You are not currently on a branch", err: ErrDetached},
	// Unmerged paths left by a merge on the computer.
	{text: "you have unmerged files", err: ErrUnmerged},
	{text: "unresolved conflict", err: ErrUnmerged},
	{text: "you need to resolve your current index first", err: ErrUnmerged},
	{text: "cannot switch branch while merging", err: ErrUnmerged},
	{text: "Automatic merge failed", stdout: true, err: ErrUnmerged},
	// No upstream, or one whose branch is gone from the remote.
	{text: "no upstream configured for branch", err: ErrNoUpstream},
	{text: "@{upstream} - not something we can merge", err: ErrNoUpstream},
	{text: "Not possible to fast-forward", err: ErrNotFastForward},
	{text: "nothing to commit", stdout: true, err: ErrNothingToCommit},
	{text: "nothing added to commit", stdout: true, err: ErrNothingToCommit},
	{text: "no changes added to commit", stdout: true, err: ErrNothingToCommit},
	{text: "would be overwritten", err: ErrDirty},
	{text: "contains modified or untracked files", err: ErrDirty},
	// A rebase (a pull that rebases) refuses any uncommitted change.
	{text: "cannot rebase: You have unstaged changes", err: ErrDirty},
	{text: "cannot rebase: Your index contains uncommitted changes", err: ErrDirty},
	{text: "invalid reference", err: ErrUnknownRef},
	{text: "unknown revision", err: ErrUnknownRef},
	{text: "not a commit", err: ErrUnknownRef},
	{text: "did not match any", err: ErrUnknownRef},
	{text: "already exists", err: ErrExists},
}

// gitFailure turns a failed git run into the refusal that says what to do,
// keeping err (git's exit and stderr) in the chain for the host's log. res is
// what run returned with err (nil is fine). An error that is not a git exit,
// or a failure no entry names, is returned as it is: an *ExitError still
// reads ErrGitFailed's sentence.
func gitFailure(res *result, err error) error {
	var ee *ExitError
	if !errors.As(err, &ee) {
		return err
	}
	var stdout string
	if res != nil {
		stdout = string(res.stdout)
	}
	for _, f := range failures {
		out := ee.Stderr
		if f.stdout {
			out = stdout
		}
		if strings.Contains(out, f.text) {
			return errors.Join(f.err, err)
		}
	}
	return err
}

// Why git was stopped. git opens a work tree's .gitignore (in every folder
// status looks for untracked files in) and .gitattributes (wherever a
// path's attributes are asked) with a plain open(2), no O_NONBLOCK, and
// reads to the end. A FIFO there blocks the open until a writer comes,
// which none does; a device there (/dev/zero's kind) has no end, so git
// reads until the memory bound or the deadline stops it. git opens these
// files itself, never through fsguard, so the gate cannot keep it from
// them. It stops a git that waits to open a FIFO within a second (the
// kernel names the wait, so no file has to be found first), and when git
// was stopped, by that, its deadline or its memory bound, it looks for
// such a file and names it in the sentence instead of a bare "too long" or
// "a huge object".

// gitReadsInTree are the names git opens as files in a work tree's folders
// without asking the gate. (.mailmap is another, never read: log.mailmap is
// forced off. A FIFO .gitmodules is left alone by the calls the gate runs.)
var gitReadsInTree = []string{".gitignore", ".gitattributes"}

// The FIFO watch: a running git is looked at every fifoPoll, and stopped
// when fifoLooks looks in a row find it waiting to open a FIFO (about 0.6
// s; a FIFO that some program on the computer feeds opens at once). At most
// maxWatched processes (git and the gits it started) are read per look.
const (
	fifoPoll   = 200 * time.Millisecond
	fifoLooks  = 3
	maxWatched = 64
)

// errFIFOWait is the cause logged when the watch stopped git.
var errFIFOWait = errors.New("git waited to open a FIFO")

// fifoWatch stops a git process that waits to open a FIFO. The kernel names
// the wait (wchan is wait_for_partner, in fifo_open), which no open of a
// regular file, folder or device sleeps in. Where /proc does not say
// (macOS, a kernel without symbol names) the deadline stops git as before.
type fifoWatch struct {
	pid   int
	stop  func()
	done  chan struct{}
	ended chan struct{}
	fired bool // set before ended is closed
}

// watchFIFO starts watching the process pid; stop is called once if it
// waits on a FIFO.
func watchFIFO(pid int, stop func()) *fifoWatch {
	w := &fifoWatch{pid: pid, stop: stop, done: make(chan struct{}), ended: make(chan struct{})}
	go w.loop()
	return w
}

func (w *fifoWatch) loop() {
	defer close(w.ended)
	tick := time.NewTicker(fifoPoll)
	defer tick.Stop()
	for seen := 0; seen < fifoLooks; {
		select {
		case <-w.done:
			return
		case <-tick.C:
		}
		seen++
		if !waitingOnFIFO(w.pid) {
			seen = 0
		}
	}
	w.fired = true
	w.stop()
}

// end stops the watch and reports whether it stopped git.
func (w *fifoWatch) end() bool {
	close(w.done)
	<-w.ended
	return w.fired
}

// waitingOnFIFO reports whether a thread of pid, or of a process it
// started, sleeps in the kernel waiting for a FIFO's other end.
func waitingOnFIFO(pid int) bool {
	pids := []int{pid}
	for i := 0; i < len(pids); i++ {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pids[i]))
		if err != nil {
			continue // gone, or no /proc
		}
		for _, task := range tasks {
			dir := fmt.Sprintf("/proc/%d/task/%s/", pids[i], task.Name())
			if wchan, _ := os.ReadFile(dir + "wchan"); string(wchan) == "wait_for_partner" {
				return true
			}
			children, _ := os.ReadFile(dir + "children")
			for c := range strings.FieldsSeq(string(children)) {
				if n, err := strconv.Atoi(c); err == nil && len(pids) < maxWatched {
					pids = append(pids, n)
				}
			}
		}
	}
	return false
}

// stopScanTime bounds the look for the file that stopped git.
const stopScanTime = 5 * time.Second

// stoppedBy finds what in the work tree git was likely stopped by: FIFOs
// and devices named as a file git reads there (fsguard's tree scan, which
// opens nothing and never follows a link), FIFOs first when git was seen
// waiting on one. It returns nothing for a bare repository.
func (r *Repo) stoppedBy(waitedOnFIFO bool) []fsguard.Hazard {
	if r.root == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopScanTime)
	defer cancel()
	hazards, _ := r.root.Hazards(ctx)
	var found []fsguard.Hazard
	for _, h := range hazards {
		if h.Kind == fsguard.HazardSpecial && h.Detail != "socket" && slices.Contains(gitReadsInTree, path.Base(h.Path)) {
			found = append(found, h)
		}
	}
	if waitedOnFIFO {
		slices.SortStableFunc(found, func(a, b fsguard.Hazard) int { return cmp.Compare(notFIFO(a), notFIFO(b)) })
	}
	return found
}

func notFIFO(h fsguard.Hazard) int {
	if h.Detail == "FIFO" {
		return 0
	}
	return 1
}

// whyStopped returns the refusal of a git that was stopped: err is the
// runner's (ErrTimeout, or ErrOutOfMemory with git's own words), kept as
// text for the log; the sentence names the file that stopped git when one
// is found. waitedOnFIFO: the FIFO watch stopped git, which the sentence
// says even when the FIFO is not found.
func (r *Repo) whyStopped(err error, waitedOnFIFO bool) error {
	found := r.stoppedBy(waitedOnFIFO)
	var why *refusal.Detailed
	switch {
	case len(found) > 0 && errors.Is(err, ErrOutOfMemory):
		what, does := special(found)
		why = refusal.Errorf(ErrOutOfMemory,
			"Git needed more memory than gatehouse allows for a phone (%s): %s, not a regular file, and git %s. Replace it with a regular file on the computer.",
			mib(r.wall.limit()), what, does)
	case len(found) > 0:
		what, does := special(found)
		why = refusal.Errorf(ErrTimeout,
			"Git took too long and was stopped: %s, not a regular file, and git %s. Replace it with a regular file on the computer.", what, does)
	case waitedOnFIFO:
		why = refusal.Errorf(ErrTimeout,
			"Git took too long and was stopped: it was waiting to open a FIFO (a named pipe) in this checkout, which it would wait on forever. Find it on the computer (find . -type p) and replace it with a regular file.")
	default:
		return err
	}
	if waitedOnFIFO {
		return fmt.Errorf("%w: %s: %w", errFIFOWait, err, why)
	}
	return fmt.Errorf("%s: %w", err, why)
}

// special says what the first of found is ("src/.gitignore in this
// checkout is a FIFO (a named pipe)") and what git does with it. The
// folder names are the checkout's: display.Text quotes a control
// character, so none reaches a terminal that shows the sentence.
func special(found []fsguard.Hazard) (what, does string) {
	name := display.Text(found[0].Path)
	if len(found) > 1 {
		name += fmt.Sprintf(" (and %d more)", len(found)-1)
	}
	if found[0].Detail == "FIFO" {
		return name + " in this checkout is a FIFO (a named pipe)", "waits on it forever"
	}
	return name + " in this checkout is a " + found[0].Detail, "reads it without end"
}
