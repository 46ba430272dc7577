package gate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// TestRunnerRefusesOptionShapedArguments: an argument where a ref goes that
// starts with '-' is an option to git (diff takes revisions with no
// --end-of-options): --output=FILE writes any file. The runner refuses it
// before any process starts, for every trust, even with the decision
// bypassed.
func TestRunnerRefusesOptionShapedArguments(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	r := open(t, dir)
	c := call{sub: subDiff, args: []string{"--output=" + filepath.Join(t.TempDir(), "x")}}

	// Without the wall: the very command line the runner would build
	// writes the file.
	gittest.Git(t, dir, r.argv(desktop, openDecision, c)...)
	if _, err := os.Stat(c.args[0][len("--output="):]); err != nil {
		t.Fatalf("not reproduced: plain git with the runner's argv wrote no file: %v", err)
	}

	for _, tc := range []struct {
		t trust.Trust
		d *decision
	}{{desktop, openDecision}, {closed, bypass}} {
		out := filepath.Join(t.TempDir(), "x")
		c := call{sub: subDiff, args: []string{"--output=" + out}}
		before := r.started.Load()
		_, err := r.run(ctx, tc.t, tc.d, c)
		if !errors.Is(err, ErrOptionShaped) {
			t.Fatalf("%v: run gave %v, want ErrOptionShaped", tc.t, err)
		}
		if n := r.started.Load() - before; n != 0 {
			t.Fatalf("%v: %d git processes started before the refusal", tc.t, n)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v: the file was written: %v", tc.t, err)
		}
	}
}

// TestDashPathsStayPaths: a file may be named "-rf". It goes after "--" as
// ./-rf, so no word of the command line past the options starts with '-',
// and the file still stages, shows and discards.
func TestDashPathsStayPaths(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"-rf": "a\n"})
	write(t, dir, map[string]string{"-rf": "b\n"})
	r := open(t, dir)
	argv := r.argv(closed, bypass, call{sub: subReset, paths: []string{"-rf"}})
	if i := slices.Index(argv, "--"); i < 0 || argv[i+1] != "./-rf" {
		t.Fatalf("argv %q", argv)
	}
	if _, err := r.Stage(ctx, closed, trust.Control, StageOptions{Paths: []string{"-rf"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stage(ctx, closed, trust.Control, StageOptions{Paths: []string{"-rf"}, Unstage: true}); err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "diff", "--cached", "--name-only"); out != "" {
		t.Fatalf("-rf still staged: %q", out)
	}
	d, err := r.Diff(ctx, closed, trust.Control, DiffOptions{Path: "-rf"})
	if err != nil || d.Diff == "" {
		t.Fatalf("diff of -rf: %+v %v", d, err)
	}
	if _, err := r.Discard(ctx, closed, DiscardOptions{Paths: []string{"-rf"}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "-rf")); got != "a\n" {
		t.Fatalf("-rf after discard: %q", got)
	}
}

// TestFlagsLiveInTheSubcommandTable: the closed gate's per-subcommand flags
// come from the table, whatever a call site passes, so no closed diff, log
// or show can run an external diff or a textconv program, and no closed
// status or diff reads a submodule. The desktop keeps its own textconv.
func TestFlagsLiveInTheSubcommandTable(t *testing.T) {
	r := &Repo{}
	for _, tc := range []struct {
		s                sub
		closedWant, none []string
	}{
		{subDiff, []string{"--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--src-prefix=a/", "--dst-prefix=b/"}, nil},
		{subLog, []string{"--no-ext-diff", "--no-textconv", "--no-show-signature", "--no-mailmap"}, nil},
		{subShow, []string{"--no-ext-diff", "--no-textconv", "--no-show-signature", "--no-mailmap", "--src-prefix=a/"}, nil},
		{subStatus, []string{"--ignore-submodules=all"}, nil},
		{subDiffFiles, []string{"--ignore-submodules=all"}, nil},
		{subBlame, []string{"--no-textconv", "--no-ignore-revs-file"}, nil},
	} {
		for _, c := range []call{{sub: tc.s}, {sub: tc.s, opts: []string{"-z"}, args: []string{"HEAD"}, paths: []string{"a"}}} {
			closedArgv := r.argv(closed, bypass, c)
			desktopArgv := r.argv(desktop, openDecision, c)
			for _, f := range tc.closedWant {
				if !slices.Contains(closedArgv, f) {
					t.Errorf("closed %s: %s missing from %q", tc.s.name, f, closedArgv)
				}
			}
			if slices.Contains(desktopArgv, "--no-textconv") || slices.Contains(desktopArgv, "--ignore-submodules=all") {
				t.Errorf("desktop %s carries a closed flag: %q", tc.s.name, desktopArgv)
			}
			for _, f := range tc.s.flags {
				if !slices.Contains(desktopArgv, f) {
					t.Errorf("desktop %s: %s missing", tc.s.name, f)
				}
			}
		}
	}
}

// TestNoDiffProgramRunsForAClosedGate runs the real operations on a
// repository whose config names an external diff and a textconv program:
// the desktop's Diff and Show run them; the closed gate's Diff (work tree
// and index), Log and Show never do. (The Change gate refuses such a config
// outright, so a commit's own diff is covered by the table test above.)
func TestNoDiffProgramRunsForAClosedGate(t *testing.T) {
	gittest.Home(t, "")
	build := func(t *testing.T) (dir, marker string) {
		prog, marker := gittest.PayloadFile(t)
		dir = repoWith(t, map[string]string{"a.txt": "a\n", "t.conv": "t\n", ".gitattributes": "*.conv diff=conv\n"},
			"diff.external", prog, "diff.conv.textconv", prog, "user.name", "u", "user.email", "u@example.com")
		write(t, dir, map[string]string{"a.txt": "b\n", "t.conv": "u\n"})
		git(t, dir, "commit", "-qam", "two")
		write(t, dir, map[string]string{"a.txt": "c\n", "t.conv": "v\n"})
		return dir, marker
	}
	for name, op := range map[string]func(r *Repo, tr trust.Trust) error{
		"diff": func(r *Repo, tr trust.Trust) error {
			_, err := r.Diff(ctx, tr, trust.Full, DiffOptions{})
			return err
		},
		"show": func(r *Repo, tr trust.Trust) error {
			_, err := r.Show(ctx, tr, trust.Full, git(t, r.workTree, "rev-parse", "HEAD")[:40], "")
			return err
		},
	} {
		dir, marker := build(t)
		_ = op(open(t, dir), desktop)
		if !gittest.Fired(marker) {
			t.Fatalf("%s: not reproduced: the desktop ran no diff program", name)
		}
	}
	dir, marker := build(t)
	r := open(t, dir)
	head := git(t, dir, "rev-parse", "HEAD")[:40]
	if _, err := r.Diff(ctx, closed, trust.Full, DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "a.txt", "t.conv")
	if _, err := r.Diff(ctx, closed, trust.Full, DiffOptions{Staged: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Log(ctx, closed, LogOptions{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", "t.conv"} {
		if _, err := r.Show(ctx, closed, trust.Full, head, path); err != nil {
			t.Fatal(err)
		}
	}
	if gittest.Fired(marker) {
		t.Fatal("a closed diff, log or show ran the repository's diff program")
	}
}
