package methods_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// pageAll calls method from offset 0, following next until it is absent,
// and returns every page's raw result; it fails on a refusal (the answer
// "too large to send" among them) or on more pages than a list can need.
func pageAll(t *testing.T, h *host, method string, params map[string]any) []rpc.Response {
	t.Helper()
	var pages []rpc.Response
	offset := 0
	for {
		p := map[string]any{}
		for k, v := range params {
			p[k] = v
		}
		if offset > 0 {
			p["offset"] = offset
		}
		r := h.call(t, method, p)
		if !r.OK {
			t.Fatalf("%s at offset %d: %s %s", method, offset, r.Code, r.Error)
		}
		if len(r.Result) > rpc.PageBudget {
			t.Fatalf("%s: a page of %d bytes", method, len(r.Result))
		}
		pages = append(pages, r)
		var next struct {
			Next      int  `json:"next"`
			Truncated bool `json:"truncated"`
		}
		mustUnmarshal(t, r.Result, &next)
		if next.Truncated {
			t.Fatalf("%s: truncated at offset %d", method, offset)
		}
		if next.Next == 0 {
			t.Logf("%s: %d pages, the last from offset %d", method, len(pages), offset)
			return pages
		}
		if next.Next <= offset || len(pages) > 1000 {
			t.Fatalf("%s: next %d after offset %d", method, next.Next, offset)
		}
		offset = next.Next
	}
}

func mustUnmarshal(t *testing.T, raw []byte, into any) {
	t.Helper()
	if err := jsonUnmarshal(raw, into); err != nil {
		t.Fatal(err)
	}
}

// onceEach fails unless got holds exactly the names of want, each once, in
// want's order.
func onceEach(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: %d names over the pages, want %d (first difference at %d)", what, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// With 6,000 new files one status answer held 3,239 and the rest could be
// neither seen nor staged by name. Paged, every file comes once, in git's
// order, and the last page's files can be staged by name.
func TestStatusAndChangesPageEveryFile(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	files := map[string]string{}
	for i := range 6000 {
		files[fmt.Sprintf("new/dir%02d/untracked-file-with-a-long-name-%05d.txt", i%40, i)] = "x\n"
	}
	gittest.Write(t, dir, files)
	// git's own order, from plain git.
	var want []string
	for rec := range strings.SplitSeq(gittest.Git(t, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all"), "\x00") {
		if rec != "" {
			want = append(want, rec[3:])
		}
	}
	if len(want) != 6000 {
		t.Fatalf("plain git sees %d files", len(want))
	}
	h := newHost(t, trust.Control, dir)
	id := h.ids[dir]

	pages := pageAll(t, h, "git.status", map[string]any{"target": id})
	var got []string
	for _, p := range pages {
		var st struct {
			Branch string `json:"branch"`
			Files  []struct{ Path, Index, Worktree string }
		}
		mustUnmarshal(t, p.Result, &st)
		if st.Branch == "" {
			t.Fatal("a page without the branch")
		}
		for _, f := range st.Files {
			got = append(got, f.Path)
		}
	}
	if len(pages) < 2 {
		t.Fatalf("6,000 files on %d page", len(pages))
	}
	onceEach(t, "git.status", got, want)

	got = nil
	for _, p := range pageAll(t, h, "git.changes", map[string]any{"target": id}) {
		var ch struct {
			Files []struct{ Path, Status string }
		}
		mustUnmarshal(t, p.Result, &ch)
		for _, f := range ch.Files {
			got = append(got, f.Path)
		}
	}
	onceEach(t, "git.changes", got, want)

	// A file seen only on the last page is staged by name.
	last := want[len(want)-1]
	var staged gatehouseStage
	h.ok(t, "git.stage", map[string]any{"target": id, "paths": []string{last}}, &staged)
	if staged.Count != 1 || !strings.HasPrefix(gittest.Git(t, dir, "status", "--porcelain=v1", "--", last), "A ") {
		t.Fatalf("stage %s: %+v", last, staged)
	}
}

// With 600,000 refs git.branches answered "The answer was too large to
// send.": its page cut only the remote list. 20,000 refs (half local, half
// remote-tracking, written as packed-refs that plain git reads) now come in
// pages, local then remote in git's order, each once.
func TestBranchesPageEveryRef(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	current := strings.TrimSpace(gittest.Git(t, dir, "branch", "--show-current"))
	var packed strings.Builder
	packed.WriteString("# pack-refs with: peeled fully-peeled \n")
	for i := range 10_000 {
		fmt.Fprintf(&packed, "%s refs/heads/feature/a-long-branch-name-%05d\n", head, i)
	}
	for i := range 10_000 {
		fmt.Fprintf(&packed, "%s refs/remotes/origin/feature/a-long-branch-name-%05d\n", head, i)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "packed-refs"), []byte(packed.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	wantLocal := strings.Fields(gittest.Git(t, dir, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads"))
	wantRemote := strings.Fields(gittest.Git(t, dir, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/remotes"))
	if len(wantLocal) != 10_001 || len(wantRemote) != 10_000 {
		t.Fatalf("plain git reads %d local and %d remote refs", len(wantLocal), len(wantRemote))
	}
	h := newHost(t, trust.View, dir)
	pages := pageAll(t, h, "git.branches", map[string]any{"target": h.ids[dir]})
	var local, remote []string
	for _, p := range pages {
		var b struct {
			Current       string
			Local, Remote []string
		}
		mustUnmarshal(t, p.Result, &b)
		if b.Current != current {
			t.Fatalf("current %q on a page, want %q", b.Current, current)
		}
		local, remote = append(local, b.Local...), append(remote, b.Remote...)
	}
	if len(pages) < 3 {
		t.Fatalf("20,001 refs on %d pages", len(pages))
	}
	onceEach(t, "local branches", local, wantLocal)
	onceEach(t, "remote branches", remote, wantRemote)
}

// Name search and grep page through their sorted results, 500 at a time.
func TestSearchAndGrepPageSorted(t *testing.T) {
	dir := t.TempDir()
	var want []string
	var lines strings.Builder
	for i := range 1200 {
		p := fmt.Sprintf("d%d/match-%04d.txt", i%9, i)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
		fmt.Fprintf(&lines, "line %d has the needle\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "lines.txt"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	h := newHost(t, trust.View, dir)
	id := h.ids[dir]

	var got []string
	pages := pageAll(t, h, "files.search", map[string]any{"target": id, "query": "match-"})
	for _, p := range pages {
		var s struct{ Paths []string }
		mustUnmarshal(t, p.Result, &s)
		got = append(got, s.Paths...)
	}
	if len(pages) != 3 {
		t.Fatalf("1,200 names on %d pages", len(pages))
	}
	onceEach(t, "files.search", got, want)

	var lineNos []int
	pages = pageAll(t, h, "files.grep", map[string]any{"target": id, "query": "needle"})
	for _, p := range pages {
		var g struct {
			Matches []struct {
				Path string
				Line int
			}
		}
		mustUnmarshal(t, p.Result, &g)
		for _, m := range g.Matches {
			if m.Path != "lines.txt" {
				t.Fatalf("match in %s", m.Path)
			}
			lineNos = append(lineNos, m.Line)
		}
	}
	if len(pages) != 3 || len(lineNos) != 1200 {
		t.Fatalf("%d lines on %d pages", len(lineNos), len(pages))
	}
	for i, n := range lineNos {
		if n != i+1 {
			t.Fatalf("line %d at position %d", n, i)
		}
	}
}

// offset is validated and bounded for every paged method; past the end is
// an empty last page; a small list is one page with no next.
func TestPagedOffsets(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	gittest.Write(t, dir, map[string]string{"a.txt": "bb\n", "new.txt": "n\n"})
	h := newHost(t, trust.View, dir)
	id := h.ids[dir]
	calls := map[string]map[string]any{
		"git.status":   {"target": id},
		"git.changes":  {"target": id},
		"git.branches": {"target": id},
		"files.search": {"target": id, "query": "txt"},
		"files.grep":   {"target": id, "query": "bb"},
	}
	for method, params := range calls {
		with := func(offset any) map[string]any {
			p := map[string]any{"offset": offset}
			for k, v := range params {
				p[k] = v
			}
			return p
		}
		for _, bad := range []any{-1, 1_000_001, "3", 1.5} {
			h.refused(t, method, with(bad), rpc.CodeBadParams, "")
		}
		if pages := pageAll(t, h, method, params); len(pages) != 1 {
			t.Fatalf("%s: a small list on %d pages", method, len(pages))
		}
		var past map[string]any
		h.ok(t, method, with(1_000_000), &past)
		if _, ok := past["next"]; ok {
			t.Fatalf("%s: next past the end: %v", method, past)
		}
		for _, list := range []string{"files", "local", "remote", "paths", "matches"} {
			if v, ok := past[list]; ok && len(v.([]any)) != 0 {
				t.Fatalf("%s: %s past the end: %v", method, list, v)
			}
		}
	}
}

func jsonUnmarshal(raw []byte, into any) error { return json.Unmarshal(raw, into) }
