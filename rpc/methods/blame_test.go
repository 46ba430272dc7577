package methods_test

import (
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// git.blame and git.diffPage over the protocol, for a view device: a
// file's blame, a secret's refused with the sentence, a range the method
// cannot take refused before the gate; the whole diff paged with next,
// the secret counted and not listed, an offset out of bounds refused.
func TestBlameAndDiffPageOverTheProtocol(t *testing.T) {
	gittest.Home(t, "")
	files := map[string]string{"a.txt": "one\ntwo\n", ".env": "TOKEN=1\n"}
	for i := range 30 {
		files[fmt.Sprintf("f%02d.txt", i)] = "x\n"
	}
	dir := gittest.Init(t, files)
	changed := map[string]string{".env": "TOKEN=2\n"}
	for i := range 30 {
		changed[fmt.Sprintf("f%02d.txt", i)] = "y\n"
	}
	gittest.Write(t, dir, changed)
	h := newHost(t, trust.View, dir)
	id := h.ids[dir]

	var b struct {
		Lines []struct {
			Line int
			OID  string
			Text string
		}
		Commits map[string]struct{ Author, Subject string }
	}
	h.ok(t, "git.blame", map[string]any{"target": id, "path": "a.txt"}, &b)
	if len(b.Lines) != 2 || b.Lines[1].Text != "two" || b.Commits[b.Lines[0].OID].Subject != "first" {
		t.Fatalf("blame: %+v", b)
	}
	h.refused(t, "git.blame", map[string]any{"target": id, "path": ".env"}, rpc.CodeRefused, "may hold secrets")
	h.refused(t, "git.blame", map[string]any{"target": id, "path": "a.txt", "count": 5001}, rpc.CodeBadParams, "")
	h.refused(t, "git.blame", map[string]any{"target": id, "path": "a.txt", "start": -1}, rpc.CodeBadParams, "")

	var p struct {
		Files         []struct{ Path string }
		Total, Next   int
		HiddenSecrets int
	}
	h.ok(t, "git.diffPage", map[string]any{"target": id, "limit": 20}, &p)
	if p.Total != 30 || len(p.Files) != 20 || p.Next != 20 || p.HiddenSecrets != 1 {
		t.Fatalf("first page: total %d, %d files, next %d, hidden %d", p.Total, len(p.Files), p.Next, p.HiddenSecrets)
	}
	next := p.Next
	p.Files, p.Next = nil, 0
	h.ok(t, "git.diffPage", map[string]any{"target": id, "offset": next, "limit": 20}, &p)
	if len(p.Files) != 10 || p.Next != 0 || p.Files[9].Path != "f29.txt" {
		t.Fatalf("second page: %+v", p)
	}
	h.refused(t, "git.diffPage", map[string]any{"target": id, "offset": -1}, rpc.CodeBadParams, "")
}
