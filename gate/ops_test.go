package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

func TestStatusParsesEveryKind(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "old name.txt": "x\n", "del.txt": "d\n"})
	git(t, dir, "mv", "old name.txt", "new name.txt")
	write(t, dir, map[string]string{"a.txt": "changed\n", "untracked dir/u.txt": "u\n", "b.txt": "staged\n"})
	git(t, dir, "add", "b.txt")
	if err := os.Remove(filepath.Join(dir, "del.txt")); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []trust.Trust{desktop, closed, phoneOn} {
		st, err := open(t, dir).Status(ctx, tr)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]FileStatus{}
		for _, f := range st.Files {
			got[f.Path] = f
		}
		if st.Branch != "main" || st.Head == "" {
			t.Fatalf("branch %q head %q", st.Branch, st.Head)
		}
		for path, want := range map[string]string{"a.txt": ".M", "b.txt": "M.", "new name.txt": "R.", "del.txt": ".D", "untracked dir/u.txt": "??"} {
			if f := got[path]; f.Index+f.Worktree != want {
				t.Errorf("%v: %s is %q, want %q", tr, path, f.Index+f.Worktree, want)
			}
		}
		if got["new name.txt"].OrigPath != "old name.txt" {
			t.Errorf("rename origPath %q", got["new name.txt"].OrigPath)
		}
	}
}

func TestNotACheckoutIsNeverSearchedUpward(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"sub/x.txt": "x"})
	// Plain git run in the subfolder finds the parent repository.
	if out := git(t, filepath.Join(dir, "sub"), "rev-parse", "--show-toplevel"); !strings.Contains(out, dir) {
		t.Fatalf("plain git did not discover the parent: %s", out)
	}
	_, err := tryOpen(t, filepath.Join(dir, "sub"))
	wantRefusal(t, err, ErrNotCheckout, "not a git checkout")
}

func TestStageUnstageAndTheirLimits(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", "old.txt": "o\n"})
	write(t, dir, map[string]string{"a.txt": "A\n", "new.txt": "n\n", ".env": "SECRET=1\n", "dir/x.txt": "x\n", "-rf": "dash\n"})
	r := open(t, dir)
	res, err := r.Stage(ctx, closed, trust.Control, StageOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 4 || res.Skipped != 1 {
		t.Fatalf("stage all: %+v (want 4 staged, .env skipped)", res)
	}
	staged := git(t, dir, "diff", "--cached", "--name-only")
	if strings.Contains(staged, ".env") || !strings.Contains(staged, "-rf") {
		t.Fatalf("staged:\n%s", staged)
	}
	// A control device naming a secret is refused; a full one may stage it.
	_, err = r.Stage(ctx, closed, trust.Control, StageOptions{Paths: []string{".env"}})
	wantRefusal(t, err, ErrSecret, ".env may hold secrets")
	if _, err := r.Stage(ctx, closed, trust.Full, StageOptions{Paths: []string{".env"}}); err != nil {
		t.Fatal(err)
	}
	// Unstaging a rename restores both names.
	git(t, dir, "commit", "-q", "-m", "two")
	git(t, dir, "mv", "old.txt", "renamed.txt")
	if _, err := r.Stage(ctx, closed, trust.Control, StageOptions{Paths: []string{"renamed.txt"}, Unstage: true}); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "diff", "--cached", "--name-only"); out != "" {
		t.Fatalf("after unstaging the rename the index still differs:\n%s", out)
	}
	for _, o := range []StageOptions{{}, {Paths: make([]string, MaxStagePaths+1)}, {Paths: []string{"../x"}}, {Paths: []string{".git/config"}}} {
		if _, err := r.Stage(ctx, closed, trust.Control, o); err == nil {
			t.Errorf("stage %v accepted", len(o.Paths))
		}
	}
}

func TestDiscard(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "keep/k.txt": "k\n"})
	write(t, dir, map[string]string{"a.txt": "A\n", "u.txt": "u\n", "other.txt": "o\n", "newdir/n.txt": "n\n"})
	git(t, dir, "mv", "b.txt", "c.txt")
	r := open(t, dir)
	_, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{"newdir"}})
	wantRefusal(t, err, ErrFolder)
	res, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{"a.txt", "u.txt", "c.txt", "newdir"}, SkipFolders: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 1 || read(t, filepath.Join(dir, "a.txt")) != "a\n" || read(t, filepath.Join(dir, "b.txt")) != "b\n" {
		t.Fatalf("discard: %+v", res)
	}
	for _, gone := range []string{"u.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still there", gone)
		}
	}
	if read(t, filepath.Join(dir, "other.txt")) != "o\n" || read(t, filepath.Join(dir, "newdir/n.txt")) != "n\n" {
		t.Fatal("discard touched a file it was not given")
	}
}

func TestCommitLogShowBranchesSwitch(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	r := open(t, dir)
	if _, err := r.Commit(ctx, closed, "nothing", false); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("empty commit: %v", err)
	}
	write(t, dir, map[string]string{"f.txt": "one\n", ".env": "TOKEN=secret-marker\n"})
	git(t, dir, "add", "f.txt", ".env")
	c, err := r.Commit(ctx, closed, "add f", false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")) != c.OID {
		t.Fatal("the commit id is not HEAD")
	}
	l, err := r.Log(ctx, closed, LogOptions{Limit: 1})
	if err != nil || len(l.Commits) != 1 || l.Commits[0].Subject != "add f" || l.Next == "" {
		t.Fatalf("log: %+v %v", l, err)
	}
	l2, err := r.Log(ctx, closed, LogOptions{Limit: 5, Before: l.Next})
	if err != nil || len(l2.Commits) != 1 || l2.Commits[0].Subject != "first" || l2.Next != "" {
		t.Fatalf("second page: %+v %v", l2, err)
	}
	s, err := r.Show(ctx, closed, trust.View, c.OID, "")
	if err != nil || s.Commit.Subject != "add f" || !strings.Contains(s.Diff, "+one") || strings.Contains(s.Diff, "secret-marker") || s.HiddenSecrets != 1 {
		t.Fatalf("show: %+v %v", s, err)
	}
	if s, _ := r.Show(ctx, closed, trust.Full, c.OID, ""); !strings.Contains(s.Diff, "secret-marker") {
		t.Fatal("full grant does not see the secret in show")
	}
	git(t, dir, "branch", "feature")
	b, err := r.Branches(ctx, closed)
	if err != nil || b.Current != "main" || strings.Join(b.Local, ",") != "feature,main" {
		t.Fatalf("branches: %+v %v", b, err)
	}
	if err := r.Switch(ctx, closed, "feature"); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(git(t, dir, "branch", "--show-current")) != "feature" {
		t.Fatal("switch did not switch")
	}
	wantRefusal(t, r.Switch(ctx, closed, "nope"), ErrUnknownRef)
	for _, bad := range []string{"-f", "--orphan=x", "a..b", "a b", "x.lock", "@{-1}", "HEAD", ""} {
		if err := r.Switch(ctx, closed, bad); !errors.Is(err, ErrBadRef) {
			t.Errorf("switch %q: %v", bad, err)
		}
	}
	for _, bad := range []string{"--output=/tmp/x", "-p", "HEAD", "zzzz"} {
		if _, err := r.Show(ctx, closed, trust.Full, bad, ""); !errors.Is(err, ErrBadOID) {
			t.Errorf("show %q: %v", bad, err)
		}
	}
	if _, err := r.Log(ctx, closed, LogOptions{Limit: 5, Before: "-n1"}); !errors.Is(err, ErrBadOID) {
		t.Errorf("log before -n1: %v", err)
	}
}

func TestDiffPreviewsAndFilters(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n", ".env": "OLD=1\n"})
	outside := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(outside, []byte("PRIVATE-KEY-MARKER\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"a.txt": "A\n", ".env": "NEW=secret-env-marker\n", "new file.txt": "line1\nline2", "bin.dat": "a\x00b"})
	if err := os.Link(outside, filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link-to-key")); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir)
	d, err := r.Diff(ctx, closed, trust.View, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"secret-env-marker", "PRIVATE-KEY-MARKER"} {
		if strings.Contains(d.Diff, banned) {
			t.Fatalf("diff leaked %s:\n%s", banned, d.Diff)
		}
	}
	for _, want := range []string{"+A", `diff --git a/new file.txt b/new file.txt`, "+line2\n\\ No newline at end of file", "Binary files /dev/null and b/bin.dat differ", "new file mode 120000"} {
		if !strings.Contains(d.Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, d.Diff)
		}
	}
	if d.HiddenSecrets != 2 {
		t.Errorf("hidden %d, want 2 (.env, notes.txt)", d.HiddenSecrets)
	}
	full, _ := r.Diff(ctx, closed, trust.Full, DiffOptions{})
	if !strings.Contains(full.Diff, "secret-env-marker") || strings.Contains(full.Diff, "PRIVATE-KEY-MARKER") {
		t.Fatalf("full grant: secret shown %v, hard link hidden %v", strings.Contains(full.Diff, "secret-env-marker"), !strings.Contains(full.Diff, "PRIVATE-KEY-MARKER"))
	}
	_, err = r.Diff(ctx, closed, trust.View, DiffOptions{Path: ".env"})
	wantRefusal(t, err, ErrSecret, "may hold secrets")
	one, err := r.Diff(ctx, closed, trust.View, DiffOptions{Path: "a.txt"})
	if err != nil || !strings.Contains(one.Diff, "+A") || strings.Contains(one.Diff, "new file") {
		t.Fatalf("diff of one path: %v\n%s", err, one.Diff)
	}
	git(t, dir, "add", "a.txt")
	staged, err := r.Diff(ctx, closed, trust.View, DiffOptions{Staged: true})
	if err != nil || !strings.Contains(staged.Diff, "+A") || strings.Contains(staged.Diff, "new file.txt") {
		t.Fatalf("staged diff: %v\n%s", err, staged.Diff)
	}
}

func TestDiffIsCut(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	write(t, dir, map[string]string{"big.txt": strings.Repeat("a line of text\n", 20000)})
	d, err := open(t, dir).Diff(ctx, closed, trust.View, DiffOptions{})
	if err != nil || !d.Truncated || len(d.Diff) > MaxDiff {
		t.Fatalf("%d bytes, truncated %v, %v", len(d.Diff), d.Truncated, err)
	}
}

func TestOneChangeAtATime(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	r := open(t, dir)
	unlock, err := r.lock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Stage(ctx, closed, trust.Control, StageOptions{All: true})
	wantRefusal(t, err, ErrBusy, "Another git change is still running on this checkout.")
	unlock()
	var wg sync.WaitGroup
	busy := 0
	var mu sync.Mutex
	for range 8 {
		wg.Go(func() {
			if _, err := r.Stage(ctx, closed, trust.Control, StageOptions{All: true}); errors.Is(err, ErrBusy) {
				mu.Lock()
				busy++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d of 8 concurrent stages refused as busy", busy)
}

func TestWorktrees(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	r := open(t, dir)
	wt, err := r.CreateWorktree(ctx, closed, "feature/x")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(r.workTree), filepath.Base(r.workTree)+".worktrees", "feature-x"); wt.Path != want {
		t.Fatalf("worktree at %s, want %s", wt.Path, want)
	}
	w := open(t, wt.Path, dir)
	write(t, wt.Path, map[string]string{"b.txt": "b\n"})
	git(t, wt.Path, "add", "b.txt")
	if _, err := w.Commit(ctx, closed, "in the worktree", false); err != nil {
		t.Fatal(err)
	}
	ws, err := w.WorktreeStatus(ctx, closed, r)
	if err != nil || ws.Branch != "feature/x" || ws.Ahead != 1 || ws.Behind != 0 || !ws.Clean {
		t.Fatalf("worktree status %+v %v", ws, err)
	}
	if err := w.MergeWorktree(ctx, closed, r); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "b.txt")) != "b\n" {
		t.Fatal("the merge did not reach the main checkout")
	}
	// A merge commit when both moved, and a refused conflict that changes nothing.
	write(t, wt.Path, map[string]string{"c.txt": "c\n"})
	git(t, wt.Path, "add", "c.txt")
	git(t, wt.Path, "commit", "-q", "-m", "c")
	write(t, dir, map[string]string{"d.txt": "d\n"})
	git(t, dir, "add", "d.txt")
	git(t, dir, "commit", "-q", "-m", "d")
	if err := w.MergeWorktree(ctx, closed, r); err != nil {
		t.Fatal(err)
	}
	write(t, wt.Path, map[string]string{"a.txt": "worktree side\n"})
	git(t, wt.Path, "commit", "-q", "-am", "a1")
	write(t, dir, map[string]string{"a.txt": "main side\n"})
	git(t, dir, "commit", "-q", "-am", "a2")
	before := git(t, dir, "rev-parse", "HEAD")
	wantRefusal(t, w.MergeWorktree(ctx, closed, r), ErrConflict)
	if git(t, dir, "rev-parse", "HEAD") != before || read(t, filepath.Join(dir, "a.txt")) != "main side\n" {
		t.Fatal("a refused merge changed the main checkout")
	}
	// Asked to, the merge stops on the conflict in the main checkout, for
	// the conflicts screen; aborting it puts main back.
	if err := w.MergeWorktreeStopping(ctx, closed, r); err != nil {
		t.Fatal(err)
	}
	if c, err := r.Conflicts(ctx, closed, trust.Full); err != nil || c.Op != OpMerge || len(c.Files) != 1 || c.Files[0].Path != "a.txt" {
		t.Fatalf("conflicts after a stopped worktree merge: %+v %v", c, err)
	}
	if _, err := r.Abort(ctx, closed, seen(t, r, closed)); err != nil || git(t, dir, "rev-parse", "HEAD") != before {
		t.Fatalf("abort: %v", err)
	}
	if err := r.RemoveWorktree(ctx, closed, w, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Fatal("worktree folder still there")
	}
}

func TestLinkedWorktreeOfAnUnservedRepositoryIsRefused(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", wt)
	if _, err := tryOpen(t, wt); !errors.Is(err, ErrRedirected) {
		t.Fatalf("a worktree of an unserved repository: %v", err)
	}
	open(t, wt, dir)
}

func TestOriginURL(t *testing.T) {
	for _, c := range []struct {
		config, origin string
	}{
		{"[remote \"origin\"]\n\turl = git@github.com:me/app.git\n", "git@github.com:me/app.git"},
		{"[remote \"origin\"]\n\turl = https://github.com/me/app\n[remote \"upstream\"]\n\turl = https://github.com/org/app.git\n", "https://github.com/me/app"},
		{"[remote \"origin\"]\n\turl = https://github.com/me/old\n\turl = https://github.com/me/app\n\tpushurl = https://github.com/me/fork\n", "https://github.com/me/app"},
		{"[remote \"b\"]\n\turl = https://github.com/x/b\n[remote \"origin\"]\n\turl = https://gitlab.com/x/a\n", "https://gitlab.com/x/a"},
		{"[include]\n\tpath = /tmp/evil\n", ""},
		{"not a config [", ""},
	} {
		if got := originOf([]byte(c.config)); got != c.origin {
			t.Errorf("%q: origin %q, want %q", c.config, got, c.origin)
		}
	}
}

func TestOriginURLIgnoresSymlinkedConfig(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	git(t, dir, "remote", "add", "origin", "https://github.com/me/app")
	r := open(t, dir)
	if r.OriginURL() != "https://github.com/me/app" {
		t.Fatal("the origin's URL not read")
	}
	evil := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(evil, []byte("[remote \"origin\"]\n\turl = https://github.com/evil/app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, ".git", "config")
	if err := os.Rename(cfg, cfg+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(evil, cfg); err != nil {
		t.Fatal(err)
	}
	if u := r.OriginURL(); u != "" {
		t.Fatalf("a symlinked config named %q", u)
	}
	_ = fsguard.ErrMetadata
}

func TestAuditConfig(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	git(t, dir, "config", "core.sshCommand", "ssh -v")
	git(t, dir, "config", "core.editor", "vim")
	git(t, dir, "config", "extensions.partialClone", "origin")
	git(t, dir, "config", "user.name", "Ann")
	write(t, dir, map[string]string{".gitmodules": "[submodule \"s\"]\n\tpath = s\n\turl = https://github.com/a/b\n"})
	rep, err := open(t, dir).AuditConfig(ctx, closed)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range rep.Findings {
		got[f.Key] = f.Gate
	}
	if got["core.sshcommand"] != "read" || got["core.editor"] != "change" || got["extensions.partialclone"] != "read" || got["user.name"] != "" {
		t.Fatalf("findings %v", got)
	}
	if !rep.Submodules || !rep.PartialClone || !strings.Contains(rep.ReadSentence, "core.sshcommand") || !strings.Contains(rep.ChangeSentence, "core.editor") {
		t.Fatalf("report %+v", rep)
	}
	clean, err := open(t, gittest.Init(t, nil)).AuditConfig(ctx, closed)
	if err != nil || len(clean.Findings) != 0 || clean.ReadSentence != "" || clean.ChangeSentence != "" {
		t.Fatalf("a clean repository: %+v %v", clean, err)
	}
}

// The history of one path is git's: the same commits as git log -- path,
// page after page, and a path that looks like pathspec magic is a name.
func TestLogOfOnePath(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "0\n", "b.txt": "0\n"})
	for i := range 5 {
		write(t, dir, map[string]string{"a.txt": strconv.Itoa(i+1) + "\n"})
		if i%2 == 0 {
			write(t, dir, map[string]string{"b.txt": strconv.Itoa(i+1) + "\n"})
		}
		git(t, dir, "commit", "-qam", "change "+strconv.Itoa(i))
	}
	r := open(t, dir)
	for _, path := range []string{"a.txt", "b.txt", ":(glob)*.txt", "missing.txt"} {
		want := strings.Fields(git(t, dir, "log", "--format=%H", "--", ":(literal)"+path))
		var got []string
		o := LogOptions{Limit: 2, Path: path}
		for range 10 {
			l, err := r.Log(ctx, closed, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range l.Commits {
				got = append(got, c.OID)
			}
			if l.Next == "" {
				break
			}
			o.Before = l.Next
		}
		if !slices.Equal(got, want) {
			t.Errorf("history of %s: %d commits, git says %d", path, len(got), len(want))
		}
	}
}

// The history holds the commits a merge brought in, in git log's order,
// page after page, and the pages stay the same history when HEAD moves
// between them. A first-parent history (what the phone was given before)
// left out every commit made on a merged branch.
func TestLogHoldsMergedCommits(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "0\n", "b.txt": "0\n"})
	git(t, dir, "switch", "-q", "-c", "side")
	for i := range 3 {
		write(t, dir, map[string]string{"b.txt": "side " + strconv.Itoa(i) + "\n"})
		git(t, dir, "commit", "-qam", "side "+strconv.Itoa(i))
	}
	git(t, dir, "switch", "-q", "main")
	for i := range 3 {
		write(t, dir, map[string]string{"a.txt": "main " + strconv.Itoa(i) + "\n"})
		git(t, dir, "commit", "-qam", "main "+strconv.Itoa(i))
	}
	git(t, dir, "merge", "-q", "--no-edit", "side")
	want := strings.Fields(git(t, dir, "log", "--format=%H"))
	firstParent := strings.Fields(git(t, dir, "log", "--first-parent", "--format=%H"))
	if len(firstParent) >= len(want) {
		t.Fatalf("not reproduced: the first-parent history has %d commits of %d", len(firstParent), len(want))
	}
	r := open(t, dir)
	var got []string
	o := LogOptions{Limit: 2}
	for page := 0; page < 10; page++ {
		l, err := r.Log(ctx, closed, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range l.Commits {
			got = append(got, c.OID)
		}
		if l.Next == "" {
			break
		}
		if page == 0 { // a commit at the desk between two pages
			write(t, dir, map[string]string{"a.txt": "later\n"})
			git(t, dir, "commit", "-qam", "later")
		}
		o.Before = l.Next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history: %d commits\n%v\ngit log says %d\n%v", len(got), got, len(want), want)
	}
	for _, bad := range []string{want[0] + "+0", want[0] + "+-1", want[0] + "+01", want[0] + "+x", "+3", want[0] + "+99999999999"} {
		if _, err := r.Log(ctx, closed, LogOptions{Before: bad}); !errors.Is(err, ErrBadOID) {
			t.Errorf("log before %q: %v", bad, err)
		}
	}
}

// Status marks secret files (by path or a rename's old path) so a device
// can show the lock before it offers a tap the host would refuse.
func TestStatusMarksSecretFiles(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"notes.txt": "n\n"})
	write(t, dir, map[string]string{".env": "TOKEN=x\n", "id_rsa": "key\n", "plain.txt": "p\n"})
	st, err := open(t, dir).Status(ctx, closed)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range st.Files {
		got[f.Path] = f.Secret
	}
	if !got[".env"] || !got["id_rsa"] || got["plain.txt"] {
		t.Fatalf("secret marks: %v", got)
	}
}

// The commit view's author and message are the commit's own, whatever
// they hold: a unit separator in the subject (the separator the commit
// line is cut at) or a body of several paragraphs.
func TestShowMessageWhole(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, map[string]string{"a.txt": "b\n"})
	msg := "subject \x1f with a separator\n\nbody line one\x1f\nbody line two\n\n- a list\n"
	git(t, dir, "-c", "user.name=Ann \x1f Author", "commit", "-qa", "--cleanup=verbatim", "-m", msg)
	oid := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	s, err := open(t, dir).Show(ctx, closed, trust.View, oid, "")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimRight(git(t, dir, "log", "-1", "--format=%B"), "\n")
	if s.Message != want || s.Commit.Subject != "subject \x1f with a separator" || s.Commit.Author != "Ann \x1f Author" || s.Commit.OID != oid {
		t.Fatalf("show: %+v\nmessage %q\nwant    %q", s.Commit, s.Message, want)
	}
	if !strings.Contains(s.Diff, "+b") {
		t.Fatalf("diff: %q", s.Diff)
	}
}

// A commit whose message is megabytes long (one line) neither empties the
// history nor makes its view too large to send: git cuts the subject and
// the view cuts the message.
func TestGiantMessage(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	write(t, dir, map[string]string{"a.txt": "b\n"})
	msg := filepath.Join(t.TempDir(), "msg")
	if err := os.WriteFile(msg, []byte(strings.Repeat("x", 6<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "commit", "-qa", "-F", msg)
	r := open(t, dir)
	l, err := r.Log(ctx, closed, LogOptions{})
	if err != nil || len(l.Commits) != 2 || len(l.Commits[0].Subject) > 400 {
		t.Fatalf("log: %d commits, %v", len(l.Commits), err)
	}
	s, err := r.Show(ctx, closed, trust.View, l.Commits[0].OID, "")
	if err != nil || len(s.Message) > maxShownMessage || len(s.Commit.Subject) > 400 || !strings.Contains(s.Diff, "+b") {
		t.Fatalf("show: message %d bytes, %v", len(s.Message), err)
	}
}
