package methods_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// git.stageHunks over the protocol: git.diff {path} hands out the hash, the
// device names hunks by position, the host stages them (Control suffices,
// as for git.stage); a stale hash is CONFLICT, a bad index BAD_PARAMS, and
// a view device is refused by scope.
func TestStageHunksOverTheProtocol(t *testing.T) {
	gittest.Home(t, "")
	var old, cur []string
	for i := range 30 {
		old = append(old, "line "+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	cur = append(cur, old...)
	cur[1], cur[27] = "FIRST", "SECOND"
	dir := gittest.Init(t, map[string]string{"a.txt": strings.Join(old, "\n") + "\n"})
	gittest.Write(t, dir, map[string]string{"a.txt": strings.Join(cur, "\n") + "\n"})
	h := newHost(t, trust.Control, dir)
	id := h.ids[dir]

	var d struct{ Diff, Hash string }
	h.ok(t, "git.diff", map[string]any{"target": id, "path": "a.txt"}, &d)
	if len(d.Hash) != 64 {
		t.Fatalf("git.diff {path} gave no hash: %+v", d)
	}
	h.refused(t, "git.stageHunks", map[string]any{"target": id, "path": "a.txt", "hunks": []int{2}, "diffHash": d.Hash}, rpc.CodeBadParams, "by their position")
	var res struct{ Count int }
	h.ok(t, "git.stageHunks", map[string]any{"target": id, "path": "a.txt", "hunks": []int{1}, "diffHash": d.Hash}, &res)
	staged := gittest.Git(t, dir, "diff", "--cached")
	if res.Count != 1 || !strings.Contains(staged, "+SECOND") || strings.Contains(staged, "FIRST") {
		t.Fatalf("count %d, staged:\n%s", res.Count, staged)
	}
	// The same tap again: the diff is not the one seen any more.
	h.refused(t, "git.stageHunks", map[string]any{"target": id, "path": "a.txt", "hunks": []int{0}, "diffHash": d.Hash}, rpc.CodeConflict,
		"This file changed since you looked at it. Look again and retry.")

	view := newHost(t, trust.View, dir)
	view.refused(t, "git.stageHunks", map[string]any{"target": view.ids[dir], "path": "a.txt", "hunks": []int{0}, "diffHash": d.Hash}, rpc.CodeAccess, "")
}
