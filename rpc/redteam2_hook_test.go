package rpc

// A second red team's findings against the status monitor
// (gate/fsmonitor.go): each test fails while its hole is open.

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// TestRedteam2MonitorHookInParentCheckoutRunsRepositoryProgram: the fix of
// the first red team's hook finding refuses the monitor's program only
// when it lies inside or above *this* checkout's folders (Repo.holds: the
// work tree, the git folder, the common git folder). A linked worktree's
// work tree is elsewhere, so a worktree of the gatehouse checkout the
// developer built ./gatehouse in (and serves with `./gatehouse serve .`)
// runs the main checkout's ./gatehouse as its fsmonitor hook. A closed
// phone makes the worktree itself (git.createWorktree: served as a target
// of its own), switches the main checkout to a branch that tracks a file
// named gatehouse (git overwrites the ignored binary), and asks the
// worktree's git.status: the closed gate runs the repository's program.
// The same holds for any other served checkout (`gatehouse serve . ~/app`)
// and for a clone made for a device: holds looks at one checkout only.
func TestRedteam2MonitorHookInParentCheckoutRunsRepositoryProgram(t *testing.T) {
	dir, hook := hookBranchCheckout(t)
	targets, tg := serveDir(t, dir, gate.Options{Monitor: hook})
	phone := trust.Phone(false)
	ctx := context.Background()

	// The phone makes a worktree; the serve serves it and watches it.
	nw, err := tg.Repo.CreateWorktree(ctx, phone, "side")
	noErr(t, err)
	wt, err := targets.Add(nw.Path, trust.Worktree, tg.ID)
	noErr(t, err)
	watch(t, wt)
	_, err = wt.Repo.Status(ctx, phone)
	noErr(t, err)

	// The phone switches the main checkout: git overwrites the ignored
	// hook with the branch's file.
	noErr(t, tg.Repo.Switch(ctx, phone, "contrib"))
	gittest.Write(t, nw.Path, map[string]string{"a.txt": "changed\n"})
	_, _ = wt.Repo.Status(ctx, phone)
	if _, err := os.Stat(filepath.Join(nw.Path, "2")); err == nil {
		t.Fatal("a closed git.status of the worktree executed the program the repository put at the status monitor's path in the main checkout (it made the file \"2\")")
	}
	if all, _ := wt.Repo.MonitoredStatuses(); all != 0 {
		t.Fatal("the worktree's status monitor ran with its program inside another served checkout of the same repository")
	}
}
