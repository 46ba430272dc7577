package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// absent is a side where the file does not exist.
const absent = "\x00absent"

// stoppedOn builds a checkout where a merge of branch side into main (op
// "merge") or a rebase of side onto main (op "rebase") stopped on the given
// files: path → {base, main's version, side's version}. It is built the
// same way every time (fixed dates), so two calls give the same commits.
func stoppedOn(t *testing.T, op string, files map[string][3]string) string {
	t.Helper()
	base := map[string]string{"README.md": "hello\n"}
	for p, v := range files {
		if v[0] != absent {
			base[p] = v[0]
		}
	}
	dir := gittest.Init(t, base)
	git(t, dir, "checkout", "-q", "-b", "side")
	commitSide(t, dir, files, 2, "side change")
	git(t, dir, "checkout", "-q", "main")
	commitSide(t, dir, files, 1, "main change")
	if op == "merge" {
		git(t, dir, "!", "merge", "-q", "side")
	} else {
		git(t, dir, "checkout", "-q", "side")
		git(t, dir, "!", "rebase", "main")
	}
	if git(t, dir, "ls-files", "-u") == "" {
		t.Fatalf("%s stopped on no conflict", op)
	}
	return dir
}

func commitSide(t *testing.T, dir string, files map[string][3]string, i int, msg string) {
	t.Helper()
	for p, v := range files {
		if v[i] == absent {
			git(t, dir, "rm", "-q", "--", p)
			continue
		}
		write(t, dir, map[string]string{p: v[i]})
		git(t, dir, "add", "--", p)
	}
	git(t, dir, "commit", "-q", "-m", msg)
}

// pathState is what git holds for a path afterwards: its index entries and
// its work tree bytes.
func pathState(t *testing.T, dir, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, path))
	file := string(data)
	if err != nil {
		file = "(no file)"
	}
	return git(t, dir, "ls-files", "-s", "--", path) + "\n" + file
}

func detail(t *testing.T, r *Repo, tr trust.Trust, g trust.Grant, path string) *ConflictDetail {
	t.Helper()
	d, err := r.ConflictOf(ctx, tr, g, path)
	if err != nil {
		t.Fatalf("conflict of %s: %v", path, err)
	}
	return d
}

// The files of every kind of conflict the page resolves, with what each is.
var everyKind = map[string][3]string{
	"text.txt":   {"1\n2\n3\n", "1\nmain\n3\n", "1\nside\n3\n"},
	"crlf.txt":   {"1\r\n2\r\n3\r\n", "1\r\nmain\r\n3\r\n", "1\r\nside\r\n3\r\n"},
	"nonl.txt":   {"1\n2\n3", "1\n2\nmain", "1\n2\nside"},
	"bin.dat":    {"\x00\x01base", "\x00\x01main", "\x00\x01side"},
	"delmod.txt": {"a\n", absent, "a\nside\n"},
	"moddel.txt": {"a\n", "a\nmain\n", absent},
	"addadd.txt": {absent, "main\n", "side\n"},
	"marks.txt": {"<<<<<<< fake\nx\n=======\ny\n>>>>>>> fake\n1\n",
		"<<<<<<< fake\nx\n=======\ny\n>>>>>>> fake\nmain\n", "<<<<<<< fake\nx\n=======\ny\n>>>>>>> fake\nside\n"},
}

// TestTakeSideIsGitCheckoutOursTheirs: for every kind of conflict, in a
// merge and in a rebase, what the phone's Take gives (index and work tree)
// is byte for byte what git checkout --ours/--theirs and git add (or git
// rm, for a side that deleted the file) give in the same state.
func TestTakeSideIsGitCheckoutOursTheirs(t *testing.T) {
	gittest.Home(t, "")
	for _, op := range []string{"merge", "rebase"} {
		for _, side := range []string{"ours", "theirs"} {
			phone := stoppedOn(t, op, everyKind)
			byHand := stoppedOn(t, op, everyKind)
			r := open(t, phone)
			list, err := r.Conflicts(ctx, closed, trust.Control)
			if err != nil || list.Op != op || len(list.Files) != len(everyKind) {
				t.Fatalf("%s: conflicts %+v, %v", op, list, err)
			}
			for _, f := range list.Files {
				d := detail(t, r, closed, trust.Control, f.Path)
				if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: f.Path, Hash: d.Hash, Take: side}); err != nil {
					t.Fatalf("%s %s take %s: %v", op, f.Path, side, err)
				}
				n := map[string]int{"ours": 2, "theirs": 3}[side]
				if strings.Contains(git(t, byHand, "ls-files", "-u", "--", f.Path), " "+string(rune('0'+n))+"\t") {
					git(t, byHand, "checkout", "--"+side, "--", f.Path)
					git(t, byHand, "add", "--", f.Path)
				} else {
					git(t, byHand, "rm", "-q", "--", f.Path)
				}
				if a, b := pathState(t, phone, f.Path), pathState(t, byHand, f.Path); a != b {
					t.Errorf("%s %s take %s:\nphone: %q\ngit:   %q", op, f.Path, side, a, b)
				}
			}
		}
	}
}

// TestKindsAndRegions: each file's kind as git status names it, and a text
// file's one region with ours, base and theirs; a binary file and a delete
// side are resolved whole.
func TestKindsAndRegions(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", everyKind)
	r := open(t, dir)
	list, err := r.Conflicts(ctx, closed, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	if list.Title != "Merge branch 'side'" || list.AbortNote == "" {
		t.Errorf("progress %+v", list.Progress)
	}
	kinds := map[string]string{}
	for _, f := range list.Files {
		kinds[f.Path] = f.Kind
	}
	want := map[string]string{"text.txt": "both modified", "crlf.txt": "both modified", "nonl.txt": "both modified",
		"bin.dat": "both modified", "delmod.txt": "deleted by us", "moddel.txt": "deleted by them", "addadd.txt": "both added", "marks.txt": "both modified"}
	for p, k := range want {
		if kinds[p] != k {
			t.Errorf("%s: kind %q, want %q", p, kinds[p], k)
		}
	}
	d := detail(t, r, closed, trust.View, "text.txt")
	if len(d.Segments) != 3 || d.Segments[1].Conflict == nil || *d.Segments[1].Conflict != (Region{Ours: "main\n", Base: "2\n", Theirs: "side\n"}) ||
		d.Segments[0].Text != "1\n" || d.Segments[2].Text != "3\n" {
		t.Errorf("text.txt segments %+v", d.Segments)
	}
	if d := detail(t, r, closed, trust.View, "nonl.txt"); len(d.Segments) != 2 || *d.Segments[1].Conflict != (Region{Ours: "main", Base: "3", Theirs: "side"}) {
		t.Errorf("nonl.txt segments %+v", d.Segments)
	}
	if d := detail(t, r, closed, trust.View, "crlf.txt"); !d.CRLF || d.Segments[1].Conflict.Ours != "main\r\n" {
		t.Errorf("crlf.txt %+v", d)
	}
	if d := detail(t, r, closed, trust.View, "bin.dat"); d.Whole != "binary" || d.Segments != nil {
		t.Errorf("bin.dat %+v", d)
	}
	if d := detail(t, r, closed, trust.View, "delmod.txt"); d.Whole != "one side" || d.HasOurs || !d.HasTheirs {
		t.Errorf("delmod.txt %+v", d)
	}
	if d := detail(t, r, closed, trust.View, "addadd.txt"); len(d.Segments) != 1 || *d.Segments[0].Conflict != (Region{Ours: "main\n", Theirs: "side\n"}) {
		t.Errorf("addadd.txt %+v", d.Segments)
	}
}

// TestMarkerLinesCannotForgeARegion: a file whose own lines look like
// conflict markers has one region, the real one. With git's default
// marker size its fake markers are read as a second region.
func TestMarkerLinesCannotForgeARegion(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{"marks.txt": everyKind["marks.txt"]})
	r := open(t, dir)
	regions := func() int {
		n := 0
		for _, s := range detail(t, r, closed, trust.View, "marks.txt").Segments {
			if s.Conflict != nil {
				n++
			}
		}
		return n
	}
	markerSizeForTest.Store(7)
	forged := regions()
	markerSizeForTest.Store(0)
	if forged != 2 {
		t.Fatalf("with git's marker size the file showed %d regions, want the forged 2", forged)
	}
	if n := regions(); n != 1 {
		t.Fatalf("%d regions, want 1", n)
	}
	d := detail(t, r, closed, trust.View, "marks.txt")
	if !strings.Contains(d.Segments[0].Text, "<<<<<<< fake\n") {
		t.Fatalf("the fake markers are not text: %+v", d.Segments)
	}
}

// regionsFile has two conflicts (lines 2 and 8) and a change only side
// made (line 5), which git's merge takes.
var regionsFile = [3]string{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2o\n3\n4\n5\n6\n7\n8o\n9\n", "1\n2t\n3\n4\n5t\n6\n7\n8t\n9\n"}

// TestRegionChoicesAreAHandEdit: choosing per region gives what a person
// editing git's conflicted file by hand gives (the non-conflicting change
// of the other side kept), in a merge and a rebase, with CRLF lines and at
// a file's end without a final newline.
func TestRegionChoicesAreAHandEdit(t *testing.T) {
	gittest.Home(t, "")
	crlf := [3]string{}
	for i, s := range regionsFile {
		crlf[i] = strings.ReplaceAll(s, "\n", "\r\n")
	}
	cases := []struct {
		name    string
		file    [3]string
		choices []string
		want    string
	}{
		{"lf", regionsFile, []string{"ours", "both"}, "1\n2o\n3\n4\n5t\n6\n7\n8o\n8t\n9\n"},
		{"crlf", crlf, []string{"theirs", "ours"}, "1\r\n2t\r\n3\r\n4\r\n5t\r\n6\r\n7\r\n8o\r\n9\r\n"},
		{"nonl ours", everyKind["nonl.txt"], []string{"ours"}, "1\n2\nmain"},
		{"nonl both", everyKind["nonl.txt"], []string{"both"}, "1\n2\nmain\nside"},
	}
	for _, op := range []string{"merge", "rebase"} {
		for _, c := range cases {
			dir := stoppedOn(t, op, map[string][3]string{"f.txt": c.file})
			r := open(t, dir)
			d := detail(t, r, closed, trust.Control, "f.txt")
			if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "f.txt", Hash: d.Hash, Regions: c.choices}); err != nil {
				t.Fatalf("%s %s: %v", op, c.name, err)
			}
			if got := read(t, filepath.Join(dir, "f.txt")); got != c.want {
				t.Errorf("%s %s: file %q, want %q", op, c.name, got, c.want)
			}
			if got := git(t, dir, "cat-file", "blob", ":0:f.txt"); got != c.want {
				t.Errorf("%s %s: index %q, want %q", op, c.name, got, c.want)
			}
		}
	}
}

// TestResolveTextAndChangedFile: the edited text is stored as sent; a file
// changed on the computer since the phone looked is refused, and without
// the hash check the phone's resolution would have overwritten that edit.
func TestResolveTextAndChangedFile(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{"f.txt": regionsFile})
	r := open(t, dir)
	d := detail(t, r, closed, trust.Control, "f.txt")
	write(t, dir, map[string]string{"f.txt": "edited on the computer\n"})
	text := "the phone's result\n"
	_, err := r.Resolve(ctx, closed, trust.Full, ResolveOptions{Path: "f.txt", Hash: d.Hash, Text: &text})
	wantRefusal(t, err, ErrConflictChanged, "changed on the computer")
	if read(t, filepath.Join(dir, "f.txt")) != "edited on the computer\n" {
		t.Fatal("a refused resolve changed the file")
	}
	fresh := detail(t, r, closed, trust.Control, "f.txt")
	if fresh.Hash == d.Hash {
		t.Fatal("the hash does not cover the work tree")
	}
	_, err = r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "f.txt", Hash: fresh.Hash, Text: &text})
	wantRefusal(t, err, ErrResolveTextNeedsFull, "needs Full access")
	res, err := r.Resolve(ctx, closed, trust.Full, ResolveOptions{Path: "f.txt", Hash: fresh.Hash, Text: &text})
	if err != nil || res.Remaining != 0 {
		t.Fatalf("resolve: %+v %v", res, err)
	}
	if read(t, filepath.Join(dir, "f.txt")) != text || git(t, dir, "cat-file", "blob", ":0:f.txt") != text {
		t.Fatal("the text was not stored as sent")
	}
	_, err = r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "f.txt", Hash: fresh.Hash, Take: "ours"})
	wantRefusal(t, err, ErrNoConflict)
}

// TestSecretConflictOnlyAtFull: a conflicted secret file is counted, not
// named, below full, and can be neither read nor resolved there; at full
// it is listed and resolved.
func TestSecretConflictOnlyAtFull(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{".env": {"A=1\n", "A=main-secret\n", "A=side-secret\n"}, "f.txt": regionsFile})
	r := open(t, dir)
	full, err := r.Conflicts(ctx, closed, trust.Full)
	if err != nil || len(full.Files) != 2 {
		t.Fatalf("at full: %+v %v", full, err)
	}
	list, err := r.Conflicts(ctx, closed, trust.Control)
	if err != nil || len(list.Files) != 1 || list.Files[0].Path != "f.txt" || list.HiddenSecrets != 1 {
		t.Fatalf("below full: %+v %v", list, err)
	}
	_, err = r.ConflictOf(ctx, closed, trust.Control, ".env")
	wantRefusal(t, err, ErrSecret, ".env may hold secrets")
	d := detail(t, r, closed, trust.Full, ".env")
	if !strings.Contains(d.Segments[0].Conflict.Ours, "main-secret") {
		t.Fatalf("at full: %+v", d)
	}
	_, err = r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: ".env", Hash: d.Hash, Take: "ours"})
	wantRefusal(t, err, ErrSecret, "to resolve it")
	if _, err := r.Resolve(ctx, closed, trust.Full, ResolveOptions{Path: ".env", Hash: d.Hash, Take: "ours"}); err != nil {
		t.Fatal(err)
	}
}

// TestHardLinkedConflictHidden: a conflicted file hard-linked elsewhere is
// hidden from every device, as Diff hides it.
func TestHardLinkedConflictHidden(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{"f.txt": regionsFile})
	if err := os.Link(filepath.Join(dir, "f.txt"), filepath.Join(t.TempDir(), "elsewhere")); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	if list, err := r.Conflicts(ctx, desktop, trust.Full); err != nil || len(list.Files) != 1 {
		t.Fatalf("desktop: %+v %v", list, err)
	}
	list, err := r.Conflicts(ctx, closed, trust.Full)
	if err != nil || len(list.Files) != 0 || list.HiddenLinked != 1 {
		t.Fatalf("phone: %+v %v", list, err)
	}
	_, err = r.ConflictOf(ctx, closed, trust.Full, "f.txt")
	wantRefusal(t, err, ErrHardLinked, "hard-linked")
}

// TestConcludeMergeAndRebase: a merge concludes as a merge commit with
// git's prepared message; a rebase continues to its end.
func TestConcludeMergeAndRebase(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{"f.txt": regionsFile})
	r := open(t, dir)
	_, err := r.Conclude(ctx, closed, seen(t, r, closed))
	wantRefusal(t, err, ErrStillConflicted)
	d := detail(t, r, closed, trust.Control, "f.txt")
	if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "f.txt", Hash: d.Hash, Take: "theirs"}); err != nil {
		t.Fatal(err)
	}
	// git prepared a message listing the conflicts as '#' lines, which
	// git commit --no-edit keeps (no editor strips them).
	if prepared := read(t, filepath.Join(dir, ".git", "MERGE_MSG")); !strings.Contains(prepared, "# Conflicts:") {
		t.Fatalf("not reproduced: git prepared %q", prepared)
	}
	res, err := r.Conclude(ctx, closed, seen(t, r, closed))
	if err != nil || res.Progress.Op != "" {
		t.Fatalf("conclude: %+v %v", res, err)
	}
	if parents := strings.Fields(git(t, dir, "log", "-1", "--format=%P")); len(parents) != 2 {
		t.Fatalf("not a merge commit: %v", parents)
	}
	if msg := git(t, dir, "log", "-1", "--format=%B"); msg != "Merge branch 'side'\n\n" {
		t.Fatalf("message %q", msg)
	}
	_, err = r.Conclude(ctx, closed, seen(t, r, closed))
	wantRefusal(t, err, ErrNothingInProgress)

	dir = stoppedOn(t, "rebase", map[string][3]string{"f.txt": regionsFile})
	r = open(t, dir)
	if list, _ := r.Conflicts(ctx, closed, trust.Control); list.Op != OpRebase {
		t.Fatalf("op %q", list.Op)
	}
	d = detail(t, r, closed, trust.Control, "f.txt")
	if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "f.txt", Hash: d.Hash, Regions: []string{"theirs", "theirs"}}); err != nil {
		t.Fatal(err)
	}
	res, err = r.Conclude(ctx, closed, seen(t, r, closed))
	if err != nil || res.Progress.Op != "" {
		t.Fatalf("rebase continue: %+v %v", res, err)
	}
	if git(t, dir, "rev-parse", "HEAD^") != git(t, dir, "rev-parse", "main") || git(t, dir, "symbolic-ref", "--short", "HEAD") != "side\n" {
		t.Fatal("the rebase did not end on main")
	}
}

// TestAbortEachOperation: merge, rebase and a conflicted stash apply each
// go back to where they started.
func TestAbortEachOperation(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{"f.txt": regionsFile})
	before := git(t, dir, "rev-parse", "main")
	r := open(t, dir)
	if _, err := r.Abort(ctx, closed, seen(t, r, closed)); err != nil {
		t.Fatal(err)
	}
	if git(t, dir, "status", "--porcelain") != "" || git(t, dir, "rev-parse", "HEAD") != before {
		t.Fatal("merge abort left changes")
	}
	dir = stoppedOn(t, "rebase", map[string][3]string{"f.txt": regionsFile})
	r = open(t, dir)
	res, err := r.Abort(ctx, closed, seen(t, r, closed))
	if err != nil || res.Progress.Op != "" || git(t, dir, "rev-parse", "HEAD") != git(t, dir, "rev-parse", "side") {
		t.Fatalf("rebase abort: %+v %v", res, err)
	}
	if strings.Contains(git(t, dir, "log", "--format=%s"), "main change") {
		t.Fatal("the rebase abort kept main's commit")
	}
	_, err = r.Abort(ctx, closed, seen(t, r, closed))
	wantRefusal(t, err, ErrNothingInProgress)

	dir = gittest.Init(t, map[string]string{"f.txt": "1\n"})
	write(t, dir, map[string]string{"f.txt": "stashed\n"})
	git(t, dir, "stash", "-q")
	write(t, dir, map[string]string{"f.txt": "committed\n"})
	git(t, dir, "commit", "-qam", "c")
	git(t, dir, "!", "stash", "apply")
	r = open(t, dir)
	list, err := r.Conflicts(ctx, closed, trust.Control)
	if err != nil || list.Op != OpUnmerged || len(list.Files) != 1 {
		t.Fatalf("stash conflict: %+v %v", list, err)
	}
	if _, err := r.Abort(ctx, closed, seen(t, r, closed)); err != nil {
		t.Fatal(err)
	}
	if git(t, dir, "status", "--porcelain") != "" || !strings.Contains(git(t, dir, "stash", "list"), "stash@{0}") {
		t.Fatal("stash abort: not back, or the stash is gone")
	}
}

// TestClosedConcludeRunsNoHook: concluding a rebase runs post-rewrite and
// a merge's commit runs pre-commit, commit-msg and post-commit for the
// desktop; for a closed phone none runs.
func TestClosedConcludeRunsNoHook(t *testing.T) {
	gittest.Home(t, "")
	for _, op := range []string{"merge", "rebase"} {
		for _, tr := range []trust.Trust{desktop, closed} {
			dir := stoppedOn(t, op, map[string][3]string{"f.txt": regionsFile})
			var markers []string
			for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-rewrite", "post-checkout", "prepare-commit-msg"} {
				markers = append(markers, gittest.Hook(t, dir, h))
			}
			r := open(t, dir)
			d := detail(t, r, tr, trust.Full, "f.txt")
			if _, err := r.Resolve(ctx, tr, trust.Full, ResolveOptions{Path: "f.txt", Hash: d.Hash, Take: "ours"}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Conclude(ctx, tr, seen(t, r, tr)); err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			fired := slices.IndexFunc(markers, gittest.Fired) >= 0
			if tr == desktop && !fired {
				t.Errorf("%s: the desktop's conclude ran no hook: the test shows nothing", op)
			}
			if tr == closed && fired {
				t.Errorf("%s: a closed conclude ran a hook", op)
			}
		}
	}
}

// TestClosedRebaseWithExecRefused: a rebase whose todo list runs a
// command is refused for a closed phone; the desktop's runs it.
func TestClosedRebaseWithExecRefused(t *testing.T) {
	gittest.Home(t, "")
	for _, tr := range []trust.Trust{closed, desktop} {
		dir := gittest.Init(t, map[string]string{"f.txt": regionsFile[0]})
		git(t, dir, "checkout", "-q", "-b", "side")
		commitSide(t, dir, map[string][3]string{"f.txt": regionsFile}, 2, "side change")
		write(t, dir, map[string]string{"g.txt": "g\n"})
		git(t, dir, "add", "g.txt")
		git(t, dir, "commit", "-qm", "second")
		git(t, dir, "checkout", "-q", "main")
		commitSide(t, dir, map[string][3]string{"f.txt": regionsFile}, 1, "main change")
		git(t, dir, "checkout", "-q", "side")
		_, marker := gittest.Payload(t)
		git(t, dir, "!", "rebase", "--exec", "touch '"+marker+"'", "main")
		r := open(t, dir)
		d := detail(t, r, tr, trust.Full, "f.txt")
		if _, err := r.Resolve(ctx, tr, trust.Full, ResolveOptions{Path: "f.txt", Hash: d.Hash, Take: "ours"}); err != nil {
			t.Fatal(err)
		}
		_, err := r.Conclude(ctx, tr, seen(t, r, tr))
		if tr == closed {
			wantRefusal(t, err, ErrRebaseExec, "exec lines")
			if gittest.Fired(marker) {
				t.Fatal("a closed conclude ran the exec line")
			}
			continue
		}
		if err != nil || !gittest.Fired(marker) {
			t.Fatalf("desktop: %v, fired %v", err, gittest.Fired(marker))
		}
	}
}

// TestCherryPickAndRevertConclude: a cherry-pick and a revert that stopped
// on a conflict are shown as such and continued with git's own message.
func TestCherryPickAndRevertConclude(t *testing.T) {
	gittest.Home(t, "")
	for _, op := range []string{OpCherryPick, OpRevert} {
		dir := gittest.Init(t, map[string]string{"f.txt": "a\n"})
		git(t, dir, "checkout", "-q", "-b", "side")
		write(t, dir, map[string]string{"f.txt": "side\n"})
		git(t, dir, "commit", "-qam", "side change")
		git(t, dir, "checkout", "-q", "main")
		write(t, dir, map[string]string{"f.txt": "main\n"})
		git(t, dir, "commit", "-qam", "main change")
		if op == OpCherryPick {
			git(t, dir, "!", "cherry-pick", "side")
		} else {
			write(t, dir, map[string]string{"f.txt": "main again\n"})
			git(t, dir, "commit", "-qam", "main again")
			git(t, dir, "!", "revert", "--no-edit", "HEAD~1")
		}
		r := open(t, dir)
		list, err := r.Conflicts(ctx, closed, trust.Full)
		if err != nil || list.Op != op || len(list.Files) != 1 {
			t.Fatalf("%s: %+v %v", op, list, err)
		}
		d := detail(t, r, closed, trust.Full, "f.txt")
		if _, err := r.Resolve(ctx, closed, trust.Full, ResolveOptions{Path: "f.txt", Hash: d.Hash, Take: "theirs"}); err != nil {
			t.Fatal(err)
		}
		res, err := r.Conclude(ctx, closed, seen(t, r, closed))
		if err != nil || res.Progress.Op != "" {
			t.Fatalf("%s conclude: %+v %v", op, res, err)
		}
		msg := git(t, dir, "log", "-1", "--format=%s")
		if want := map[string]string{OpCherryPick: "side change\n", OpRevert: "Revert \"main change\"\n"}[op]; msg != want {
			t.Fatalf("%s: message %q, want %q", op, msg, want)
		}
	}
}

// TestLargeConflictResolvedWhole: a file whose regions would not fit one
// reply is resolved whole, said as "too large"; taking a side still works.
func TestLargeConflictResolvedWhole(t *testing.T) {
	gittest.Home(t, "")
	big := func(word string) string { return strings.Repeat(word+" line of a large file\n", 4000) }
	dir := stoppedOn(t, "merge", map[string][3]string{"big.txt": {big("base"), big("main"), big("side")}})
	r := open(t, dir)
	d := detail(t, r, closed, trust.Control, "big.txt")
	if d.Whole != "too large" || d.Segments != nil {
		t.Fatalf("big.txt: whole %q, %d segments", d.Whole, len(d.Segments))
	}
	if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "big.txt", Hash: d.Hash, Regions: []string{"ours"}}); err == nil {
		t.Fatal("regions of a file shown whole were accepted")
	}
	if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "big.txt", Hash: d.Hash, Take: "theirs"}); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "big.txt")) != big("side") {
		t.Fatal("take theirs did not give theirs")
	}
}

// Marking a file resolved as it is while git still finds conflict markers
// in it is refused, naming the count, until the person says to keep them:
// a developer's one tap on "Mark resolved as it is" followed by "Commit the
// merge" committed the markers. With keepMarkers (what the tap did before)
// the markers go into the index; once edited out the file is resolved
// without a question.
func TestMarkResolvedWithMarkersLeftAsks(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{"f.txt": regionsFile, "g.txt": regionsFile})
	r := open(t, dir)
	d := detail(t, r, closed, trust.Control, "f.txt")
	if d.Markers == 0 {
		t.Fatalf("the conflicted file reads as holding no markers: %+v", d)
	}
	_, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "f.txt", Hash: d.Hash, Take: "asIs"})
	wantRefusal(t, err, ErrMarkersLeft, "f.txt still has")
	if git(t, dir, "ls-files", "-u", "--", "f.txt") == "" {
		t.Fatal("a refused mark resolved the file")
	}
	if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "f.txt", Hash: d.Hash, Take: "asIs", KeepMarkers: true}); err != nil {
		t.Fatal(err)
	}
	if staged := git(t, dir, "cat-file", "blob", ":0:f.txt"); !strings.Contains(staged, "<<<<<<<") {
		t.Fatalf("not reproduced: keeping the markers staged %q", staged)
	}
	write(t, dir, map[string]string{"g.txt": "settled by hand\n"})
	g := detail(t, r, closed, trust.Control, "g.txt")
	if g.Markers != 0 {
		t.Fatalf("an edited file reads as holding %d markers", g.Markers)
	}
	if _, err := r.Resolve(ctx, closed, trust.Control, ResolveOptions{Path: "g.txt", Hash: g.Hash, Take: "asIs"}); err != nil {
		t.Fatal(err)
	}
}

// A conflicted path is one row, marked unmerged: it was listed as both
// staged and not (git's "u" record has two letters), with Unstage and
// Discard beside it.
func TestConflictedPathIsOneRow(t *testing.T) {
	gittest.Home(t, "")
	dir := stoppedOn(t, "merge", map[string][3]string{"f.txt": regionsFile})
	write(t, dir, map[string]string{"other.txt": "new\n"})
	r := open(t, dir)
	st, err := r.Status(ctx, closed)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range st.Files {
		if f.Unmerged != (f.Path == "f.txt") {
			t.Errorf("%+v", f)
		}
	}
	ch, err := r.Changes(ctx, closed)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, c := range ch.Files {
		if c.Path == "f.txt" {
			rows++
			if c.Staged || c.Status != "UU" {
				t.Errorf("the conflicted row: %+v", c)
			}
		}
	}
	if rows != 1 {
		t.Fatalf("f.txt is %d rows: %+v", rows, ch.Files)
	}
}
