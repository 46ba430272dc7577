package methods_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Branches and tags from a closed phone with full grant, through the
// dispatch: each answer is checked with git.
func TestBranchesThroughTheDispatch(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	h := newHost(t, trust.Full, dir)
	id := h.ids[dir]
	var made struct{ Branch, OID string }
	h.ok(t, "git.createBranch", map[string]any{"target": id, "name": "feature", "switch": true}, &made)
	if made.Branch != "feature" || strings.TrimSpace(gittest.Git(t, dir, "branch", "--show-current")) != "feature" {
		t.Fatalf("create and switch: %+v", made)
	}
	gittest.Write(t, dir, map[string]string{"f.txt": "f\n"})
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Git(t, dir, "commit", "-qm", "f")
	h.refused(t, "git.deleteBranch", map[string]any{"target": id, "branch": "feature"}, rpc.CodeRefused, "checked out here")
	gittest.Git(t, dir, "switch", "-q", "main")
	h.refused(t, "git.deleteBranch", map[string]any{"target": id, "branch": "feature"}, rpc.CodeConflict, "has 1 commit not merged into main")
	h.ok(t, "git.renameBranch", map[string]any{"target": id, "from": "feature", "to": "topic"}, nil)
	var gone struct{ Branch, OID string }
	h.ok(t, "git.deleteBranch", map[string]any{"target": id, "branch": "topic", "force": true}, &gone)
	if gone.OID == "" || strings.Contains(gittest.Git(t, dir, "branch"), "topic") {
		t.Fatalf("delete: %+v", gone)
	}
	h.ok(t, "git.createTag", map[string]any{"target": id, "name": "v1", "message": "one"}, nil)
	h.refused(t, "git.createTag", map[string]any{"target": id, "name": "v1"}, rpc.CodeConflict, "already exists")
	var tags struct {
		Tags []struct {
			Name      string `json:"name"`
			Annotated bool   `json:"annotated"`
			Subject   string `json:"subject"`
		} `json:"tags"`
	}
	h.ok(t, "git.tags", map[string]any{"target": id}, &tags)
	if len(tags.Tags) != 1 || tags.Tags[0].Name != "v1" || !tags.Tags[0].Annotated || tags.Tags[0].Subject != "one" {
		t.Fatalf("tags: %+v", tags)
	}
	h.refused(t, "git.pushTag", map[string]any{"target": id, "name": "v1", "sendId": "p1"}, rpc.CodeRefused, "no remote")
	h.refused(t, "git.createBranch", map[string]any{"target": id, "name": "--orphan=x"}, rpc.CodeBadParams, "not a valid branch name")
	h.refused(t, "git.switchRemoteBranch", map[string]any{"target": id, "remote": "origin/x"}, rpc.CodeBadParams, "does not exist")
}
