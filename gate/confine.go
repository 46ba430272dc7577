package gate

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// The kernel wall: every git process the closed gate starts is confined by
// the kernel (Landlock, on Linux) to the checkout's folders and git's own
// installation, and bounded in memory (RLIMIT_AS). The gates of decide.go
// and forced.go keep a repository from naming a program or a file; the wall
// holds when they miss something (a symlink inside .git, a hostile object
// that inflates to gigabytes). confine_linux.go builds it; confine_other.go
// says it is not there.

// Memory bounds of a closed git child, in MiB.
const (
	// DefaultMemoryLimitMiB is RLIMIT_AS for a closed git child when the
	// settings name none: large enough for git on a big repository with
	// the pack windows of forced.go, small enough for a laptop.
	DefaultMemoryLimitMiB = 1024
	// MinMemoryLimitMiB is the smallest bound a setting may ask for: below
	// it git's own mappings (libraries, index, the forced pack windows)
	// no longer fit.
	MinMemoryLimitMiB = 256
	// MaxMemoryMiB is the largest bound a setting may ask for, per child or
	// in total (1 PiB, more than any computer has): a larger number in MiB
	// would overflow the byte count. A value of 2^44 MiB wrapped to 0 bytes
	// and a closed child got the default 1 GiB while doctor said "0 GiB".
	MaxMemoryMiB = 1 << 30
)

// memoryLimit is the bound in bytes for the options: the default when
// unset, never below the minimum nor above the maximum.
func memoryLimit(opts Options) uint64 {
	mib := opts.MemoryLimitMiB
	if mib == 0 {
		mib = DefaultMemoryLimitMiB
	}
	return uint64(min(max(mib, MinMemoryLimitMiB), MaxMemoryMiB)) << 20
}

// ErrWallBroken is the refusal of every closed call when the kernel claims
// Landlock but a confined child could still write outside its folder: the
// wall gatehouse counts on is not there, so it fails closed.
var ErrWallBroken = refusal.New(refusal.Refused, "kernel wall not enforced",
	"This computer's kernel says it confines programs but did not in gatehouse's self-test, so gatehouse won't run Git for a phone here. Run gatehouse doctor on the computer.")

// WallReport says which of the kernel's walls are in force on this system,
// for gatehouse doctor.
type WallReport struct {
	// Landlock is "ABI n", "missing (...)", "not enforced (...)" or "not
	// available on macOS".
	Landlock string
	// Enforced: closed git children are confined by the kernel.
	Enforced bool
	// Broken: the kernel claims Landlock but the self-test found it not
	// enforced, so every closed call is refused (ErrWallBroken).
	Broken bool
	// Memory describes the memory bound of a closed git child.
	Memory string
}

// outOfMemory reports whether a git child that failed was stopped by the
// memory bound: git's own "Out of memory" or "Cannot allocate memory" death
// (exit 128), or a signal the bound raises (SIGSEGV when the stack cannot
// grow, SIGBUS, SIGKILL from the kernel's OOM killer or a cgroup).
func outOfMemory(ee *exec.ExitError, stderr []byte) bool {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		switch ws.Signal() {
		case syscall.SIGKILL, syscall.SIGSEGV, syscall.SIGBUS:
			return true
		}
	}
	return ee.ExitCode() == 128 && (bytes.Contains(stderr, []byte("Out of memory")) ||
		bytes.Contains(stderr, []byte("Cannot allocate memory")))
}

// refuseMemory is the refusal of a closed call stopped by the memory bound:
// the device sees the bound; the log keeps git's own words.
func refuseMemory(s sub, limit uint64, res *result) error {
	why := refusal.Errorf(ErrOutOfMemory,
		"Git needed more memory than gatehouse allows for a phone (%s); the repository may hold a huge object. Use Git on the computer for this checkout.",
		mib(limit))
	return fmt.Errorf("git %s: exit %d: %q: %w", s.name, res.exit, bytes.TrimSpace(res.stderr), why)
}

// mib writes a bound the way a person reads it: "1 GiB", "768 MiB".
func mib(limit uint64) string {
	if limit%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", limit>>30)
	}
	return fmt.Sprintf("%d MiB", limit>>20)
}

// WallProofs keeps the kernel wall's self-test answer between processes
// (Options.WallProofs; trust.Store is one, in the state folder). A record it
// gives back is believed only for the kernel, boot and binaries it names
// (wallproof_linux.go), and only to skip the test: the wall itself is put
// up on every closed git whatever the record says.
type WallProofs interface {
	ReadWallProof() ([]byte, error)
	WriteWallProof(record []byte) error
}

// wall is what the kernel wall holds for one Repo.
type wall struct {
	memory      uint64     // RLIMIT_AS of a closed git child, in bytes
	proofs      WallProofs // Options.WallProofs: nil proves the kernel once per process
	confinement            // the platform's part (confine_linux.go, confine_other.go)
}

// limit is the memory bound in bytes; a Repo not made by Open or OpenBare
// gets the default.
func (w *wall) limit() uint64 {
	if w.memory == 0 {
		return DefaultMemoryLimitMiB << 20
	}
	return w.memory
}

// holds reports whether dir is, or is inside or above, one of the
// checkout's folders: a PATH entry there could run what the repository
// wrote.
func (r *Repo) holds(dir string) bool {
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return true
	}
	for _, f := range []string{r.workTree, r.gitDir, r.commonDir} {
		if f != "" && (within(canon, f) || within(f, canon)) {
			return true
		}
	}
	return false
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}
