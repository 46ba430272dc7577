package gate

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
	"golang.org/x/sync/semaphore"
)

// The memory bound holds in total, not only per process. Each closed git
// child (and gh with its git) is bounded by RLIMIT_AS, which a process
// cannot exceed however much it asks for; a process-wide budget holds the
// sum of those bounds for every closed child running at once, so their
// memory together never exceeds it. Six git.log of a 700 MB commit from two
// devices reached 4.26 GB with a bound of 1 GiB each; now each waits for
// its share. A child that cannot get its share before its call's time runs
// out is refused, busy.
//
// Summing the bounds counts address space, not what a child touches: git
// stays far below its bound on an ordinary call, so the budget is set
// generously (half of this computer's memory by default).

// MemoryBudget bounds the memory of every closed child at once.
type MemoryBudget struct {
	total int64
	sem   *semaphore.Weighted
}

// NewMemoryBudget makes a budget of totalMiB (0: half of this computer's
// memory, at least one child's bound of perChildMiB).
func NewMemoryBudget(totalMiB, perChildMiB int) *MemoryBudget {
	per := int64(memoryLimit(Options{MemoryLimitMiB: perChildMiB}))
	total := int64(min(totalMiB, MaxMemoryMiB)) << 20
	if totalMiB <= 0 {
		total = physicalMemory() / 2
	}
	total = max(total, per)
	return &MemoryBudget{total: total, sem: semaphore.NewWeighted(total)}
}

// Total is the budget in bytes.
func (b *MemoryBudget) Total() int64 { return b.total }

// ErrMemoryBusy refuses a closed call that could not get its share of the
// memory budget in its time.
var ErrMemoryBusy = refusal.New(refusal.Busy, "memory budget full",
	"Git on the computer is using all the memory gatehouse allows for phones at once. Try again in a moment.")

// maxBudgetWait bounds the wait for a share of the budget.
const maxBudgetWait = 10 * time.Second

// hold waits for n bytes of the budget (at most the whole of it) and
// returns what gives them back. It waits at most half of what is left of
// ctx's time (and maxBudgetWait), so the device reads "busy" while its
// call still waits for an answer, not a call that gave up: a git.log
// waited its whole 30 s, as long as gatehouse call waits.
func (b *MemoryBudget) hold(ctx context.Context, n uint64) (func(), error) {
	w := min(int64(n), b.total)
	wait := maxBudgetWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)/2)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := b.sem.Acquire(wctx, w); err != nil {
		return nil, ErrMemoryBusy
	}
	return func() { b.sem.Release(w) }, nil
}

// toolMemoryFloor is the least address space gh is given: Go's runtime
// reserves about 600 MiB for its page summaries at start and dies below
// that ("failed to reserve page summary memory"). gh's own git inherits
// the same bound.
const toolMemoryFloor = 1 << 30

// processBudget is the budget of Repos opened without one (gatehouse do,
// tests): every closed child of this process shares it.
var processBudget = sync.OnceValue(func() *MemoryBudget { return NewMemoryBudget(0, 0) })

// budget is the Repo's budget.
func (r *Repo) budget() *MemoryBudget {
	if r.memBudget != nil {
		return r.memBudget
	}
	return processBudget()
}

// holdMemory takes a closed child's share of the budget: its bound times
// the processes it runs at once, each of which inherits the same bound (a
// fetch's transport helper and index-pack, worktree add's checkout, gh's
// git: sub.processes; r nil: a tool run outside any checkout). The
// desktop's children are not bounded and take none.
func (r *Repo) holdMemory(ctx context.Context, t trust.Trust, processes int, tool bool) (func(), error) {
	if !t.Closed() || r != nil && r.wallOff() {
		return func() {}, nil
	}
	n, b := (&wall{}).limit(), processBudget()
	if r != nil {
		n, b = r.wall.limit(), r.budget()
	}
	if tool {
		n = max(n, toolMemoryFloor)
	}
	return b.hold(ctx, uint64(max(processes, 1))*n)
}

// Process is one kind of process gatehouse starts, and the walls it runs
// under, for gatehouse doctor.
type Process struct {
	What  string // the program, and for whom
	Walls string
}

// Processes lists every process gatehouse can start on a device's behalf
// or the person's, with its walls as they stand on this system (w, from
// Walls) and the memory budget b (nil: this process's default).
func Processes(w WallReport, b *MemoryBudget) []Process {
	if b == nil {
		b = processBudget()
	}
	abi, _, _ := strings.Cut(w.Landlock, " (")
	kernel := "no kernel wall here (Landlock " + w.Landlock + ")"
	if w.Enforced {
		kernel = "the kernel wall (Landlock " + abi + ")"
	}
	total := mib(uint64(b.Total()))
	return []Process{
		{"git, for a phone with Full access off", "the gate's forced options and refusals, the git folder's shape check, " + kernel +
			" (no network, except push, fetch and pull), the memory bound per child, and all closed children together within " + total + " (each process a child starts beside it counted: a fetch's transport and index-pack, a new worktree's checkout)"},
		{"gh, and the git it runs, for a phone with Full access off", "the gate's forced options (through GIT_CONFIG_COUNT) and refusals, " + kernel +
			" (network allowed), at least 1 GiB each, within the same " + total},
		{"git and gh, for this computer's own commands and a phone with Full access on", "none: they run as you do, your hooks and drivers included"},
		{"systemctl or launchctl, for gatehouse service", "none: only when you install, remove or ask about the service"},
	}
}
