package methods_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// The conflict methods over the protocol: git.conflicts lists a stopped
// merge's files (a secret one counted, not named, below full) and one
// file's regions with its hash; git.resolve with that hash resolves it
// (control suffices), a repeat is CONFLICT; a view device may look but not
// resolve; git.conclude (full) commits the merge.
func TestConflictsOverTheProtocol(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", ".env": "A=1\n"})
	gittest.Git(t, dir, "checkout", "-q", "-b", "side")
	gittest.Write(t, dir, map[string]string{"a.txt": "side\n", ".env": "A=side\n"})
	gittest.Git(t, dir, "commit", "-qam", "side")
	gittest.Git(t, dir, "checkout", "-q", "main")
	gittest.Write(t, dir, map[string]string{"a.txt": "main\n", ".env": "A=main\n"})
	gittest.Git(t, dir, "commit", "-qam", "main")
	gittest.Git(t, dir, "!", "merge", "-q", "side")

	h := newHost(t, trust.Control, dir)
	id := h.ids[dir]
	var list struct {
		Op            string
		Files         []struct{ Path, Kind string }
		HiddenSecrets int
	}
	h.ok(t, "git.conflicts", map[string]any{"target": id}, &list)
	if list.Op != "merge" || len(list.Files) != 1 || list.Files[0].Path != "a.txt" || list.HiddenSecrets != 1 {
		t.Fatalf("conflicts at control: %+v", list)
	}
	h.refused(t, "git.conflicts", map[string]any{"target": id, "path": ".env"}, rpc.CodeRefused, ".env may hold secrets")
	var d struct {
		Hash     string
		Segments []struct {
			Conflict *struct{ Ours, Base, Theirs string }
		}
	}
	h.ok(t, "git.conflicts", map[string]any{"target": id, "path": "a.txt"}, &d)
	if len(d.Segments) != 1 || d.Segments[0].Conflict == nil || d.Segments[0].Conflict.Ours != "main\n" {
		t.Fatalf("regions: %+v", d)
	}
	view := newHost(t, trust.View, dir)
	view.refused(t, "git.resolve", map[string]any{"target": view.ids[dir], "path": "a.txt", "hash": d.Hash, "take": "ours"}, rpc.CodeAccess, "")
	var res struct{ Remaining int }
	h.ok(t, "git.resolve", map[string]any{"target": id, "path": "a.txt", "hash": d.Hash, "regions": []string{"both"}}, &res)
	if got := gittest.Read(t, dir+"/a.txt"); got != "main\nside\n" || res.Remaining != 1 {
		t.Fatalf("a.txt %q, remaining %d", got, res.Remaining)
	}
	h.refused(t, "git.resolve", map[string]any{"target": id, "path": "a.txt", "hash": d.Hash, "take": "ours"}, rpc.CodeConflict, "not in conflict")

	full := newHost(t, trust.Full, dir)
	fid := full.ids[dir]
	var env struct{ Hash string }
	full.ok(t, "git.conflicts", map[string]any{"target": fid, "path": ".env"}, &env)
	full.ok(t, "git.resolve", map[string]any{"target": fid, "path": ".env", "hash": env.Hash, "take": "theirs"}, &res)
	var done struct {
		OID      string
		Progress struct{ Op string }
	}
	var seen struct{ Op, ID string }
	full.ok(t, "git.conflicts", map[string]any{"target": fid}, &seen)
	full.refused(t, "git.conclude", map[string]any{"target": fid, "sendId": "conclude-0", "op": "rebase", "id": seen.ID}, rpc.CodeConflict, "changed since this page read it")
	full.ok(t, "git.conclude", map[string]any{"target": fid, "sendId": "conclude-1", "op": seen.Op, "id": seen.ID}, &done)
	if done.Progress.Op != "" || len(done.OID) != 40 || gittest.Git(t, dir, "status", "--porcelain") != "" {
		t.Fatalf("conclude: %+v", done)
	}
}
