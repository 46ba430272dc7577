package rpc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// watchedTarget serves a fresh checkout with a running watcher.
func watchedTarget(t *testing.T, files map[string]string) (*Target, *watcher, string) {
	t.Helper()
	gittest.Home(t, "")
	dir := gittest.Init(t, files)
	_, tg := serveDir(t, dir, gate.Options{})
	return tg, watch(t, tg), dir
}

// gitList is a fresh answer of plain git, sorted.
func gitList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	out := gittest.Git(t, dir, append([]string{"ls-files", "--others", "--exclude-standard", "-z"}, args...)...)
	var names []string
	for n := range strings.SplitSeq(out, "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// previewed lists the files git.diff previews as untracked.
func previewed(t *testing.T, tg *Target) []string {
	t.Helper()
	d, err := tg.Repo.Diff(context.Background(), trust.Desktop(), trust.Full, gate.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	lines := strings.Split(d.Diff, "\n")
	for i, l := range lines {
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "new file mode") {
			f := strings.Fields(l)
			names = append(names, strings.TrimPrefix(f[len(f)-1], "b/"))
		}
	}
	slices.Sort(names)
	return names
}

// ignored asks the gate for the ignored set, sorted, and the map's identity
// (the same identity twice is a cached answer).
func ignored(t *testing.T, tg *Target) ([]string, uintptr) {
	t.Helper()
	ig, err := tg.Repo.Ignored(context.Background(), trust.Desktop())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range ig {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, reflect.ValueOf(ig).Pointer()
}

// checkLists compares both lists with a fresh git, twice (the second
// normally from the cache), and says whether the second was cached.
func checkLists(t *testing.T, tg *Target, dir, step string) bool {
	t.Helper()
	wantIg := gitList(t, dir, "--ignored", "--directory")
	wantUn := gitList(t, dir)
	got1, p1 := ignored(t, tg)
	got2, p2 := ignored(t, tg)
	for _, got := range [][]string{got1, got2} {
		if !slices.Equal(got, wantIg) {
			t.Fatalf("after %s: ignored\n got %q\nwant %q", step, got, wantIg)
		}
	}
	for range 2 {
		if got := previewed(t, tg); !slices.Equal(got, wantUn) {
			t.Fatalf("after %s: untracked\n got %q\nwant %q", step, got, wantUn)
		}
	}
	return p1 == p2
}

// TestWatchedListsMatchGit makes random creates, deletes, renames, folder
// moves (inside, out and back in), .gitignore edits (nested too),
// info/exclude and excludes-file edits, index changes and content writes
// between calls, and checks every answer against a fresh git.
func TestWatchedListsMatchGit(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of git runs")
	}
	tg, _, dir := watchedTarget(t, map[string]string{
		"a/one.go": "one\n", "a/b/two.go": "two\n", "c/three.go": "three\n",
		".gitignore": "*.log\nbuild/\n",
	})
	outside := t.TempDir()
	excludes := filepath.Join(t.TempDir(), "global-ignore")
	rng := rand.New(rand.NewPCG(28, 2026))
	cached, n := 0, 0
	for i := range 400 {
		step := mutate(t, rng, dir, outside, excludes, i)
		if checkLists(t, tg, dir, step) {
			cached++
		}
		n++
	}
	// The comparison above proves nothing of the cache unless it answered
	// often. How often depends on how many changes land inside the cache's
	// window for a file changed just now (an answer then is used once, not
	// kept), which is faster machines' lot: a quiet 2-core machine kept
	// 196 to 203 of 400, around the half this once asked for, and failed
	// one run in three. A tenth is the bound: far under what any run kept,
	// far over what a cache that never answers would.
	t.Logf("%d of %d second answers came from the cache", cached, n)
	if cached < n/10 {
		t.Fatalf("only %d of %d second answers were cached", cached, n)
	}
}

// mutate makes one random change and names it.
func mutate(t *testing.T, rng *rand.Rand, dir, outside, excludes string, i int) string {
	t.Helper()
	folders := treeFolders(t, dir)
	files := treeFiles(t, dir)
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	exts := []string{".txt", ".log", ".tmp", ".go"}
	newName := func() string {
		return filepath.Join(pick(folders), fmt.Sprintf("n%d%s", i, exts[rng.IntN(len(exts))]))
	}
	switch rng.IntN(14) {
	case 0, 1:
		name := newName()
		gittest.Write(t, dir, map[string]string{name: "new\n"})
		return "create " + name
	case 2:
		name := pick(files)
		noErr(t, os.Remove(filepath.Join(dir, name)))
		return "remove " + name
	case 3:
		from, to := pick(files), newName()
		noErr(t, os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)))
		return "rename " + from + " " + to
	case 4:
		name := filepath.Join(pick(folders), fmt.Sprintf("m%d/deep/er", i))
		gittest.Write(t, dir, map[string]string{filepath.Join(name, "x.txt"): "x\n", filepath.Join(name, "y.log"): "y\n"})
		return "mkdir -p " + name
	case 5:
		from := pick(folders)
		if from == "." {
			return "nothing"
		}
		to := filepath.Join(pick(folders), fmt.Sprintf("moved%d", i))
		if strings.HasPrefix(to+"/", from+"/") {
			return "nothing"
		}
		noErr(t, os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)))
		return "move folder " + from + " " + to
	case 6:
		from := pick(folders)
		if from == "." {
			return "nothing"
		}
		tmp := filepath.Join(outside, fmt.Sprintf("o%d", i))
		noErr(t, os.Rename(filepath.Join(dir, from), tmp))
		gittest.Write(t, outside, map[string]string{fmt.Sprintf("o%d/sub/new%d.txt", i, i): "n\n"})
		to := filepath.Join(pick(treeFolders(t, dir)), fmt.Sprintf("back%d", i))
		noErr(t, os.Rename(tmp, filepath.Join(dir, to)))
		return "folder out and back " + from + " " + to
	case 7:
		pats := []string{"*.tmp", "!keep.tmp", "n1*", "*.txt", "a/", "moved*/", "deep/", "*.go"}
		text := strings.Join([]string{pick(pats), pick(pats), "*.log"}, "\n") + "\n"
		gittest.Write(t, dir, map[string]string{".gitignore": text})
		return ".gitignore: " + text
	case 8:
		name := filepath.Join(pick(folders), ".gitignore")
		pats := []string{"*.txt", "er/", "!*.log", "n*", ""}
		gittest.Write(t, dir, map[string]string{name: pick(pats) + "\n"})
		return "nested " + name
	case 9:
		pats := []string{"*.go", "*.tmp", "", "deep", "b/"}
		p := pick(pats)
		noErr(t, os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(p+"\n"), 0o644))
		return "info/exclude: " + p
	case 10:
		p := pick([]string{"*.txt", "", "n*"})
		noErr(t, os.WriteFile(excludes, []byte(p+"\n"), 0o644))
		gittest.Git(t, dir, "config", "--global", "core.excludesFile", excludes)
		return "core.excludesFile: " + p
	case 11:
		name := pick(files)
		if rng.IntN(2) == 0 {
			gittest.Git(t, dir, "add", "-f", "--", name)
			return "git add " + name
		}
		gittest.Git(t, dir, "rm", "-q", "--cached", "--ignore-unmatch", "--", name)
		return "git rm --cached " + name
	case 12:
		name := pick(files)
		noErr(t, os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("edit %d\n", i)), 0o644))
		return "write " + name
	default:
		name := pick(folders)
		if name == "." {
			return "nothing"
		}
		noErr(t, os.Chmod(filepath.Join(dir, name), 0o755))
		return "chmod " + name
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// treeFolders and treeFiles list the work tree (never .git), relative.
func treeFolders(t *testing.T, dir string) []string { return treeList(t, dir, true) }
func treeFiles(t *testing.T, dir string) []string   { return treeList(t, dir, false) }

func treeList(t *testing.T, dir string, folders bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() == folders && (folders || d.Name() != ".gitignore") {
			out = append(out, rel)
		}
		return nil
	})
	noErr(t, err)
	if len(out) == 0 && !folders {
		out = append(out, "a/one.go")
		gittest.Write(t, dir, map[string]string{"a/one.go": "one\n"})
	}
	return out
}

// TestWatchedListsWithoutWatcher: a checkout nobody watches asks git every
// time, as before the cache.
func TestWatchedListsWithoutWatcher(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{".gitignore": "*.log\n", "a/x.go": "x\n"})
	gittest.Write(t, dir, map[string]string{"a/y.log": "y\n"})
	targets := NewTargets(fsguard.Options{Home: "/nonexistent-home"}, gate.Options{})
	t.Cleanup(targets.Close)
	tg, err := targets.Add(dir, trust.Served, "")
	noErr(t, err)
	if checkLists(t, tg, dir, "nothing") {
		t.Fatal("an unwatched checkout's answer was kept")
	}
	// A watcher that stopped leaves the checkout unwatched again.
	w := startWatcher(tg, func() {})
	waitFor(t, func() bool { return checkLists(t, tg, dir, "watching") })
	w.stop()
	waitFor(t, func() bool { return !checkLists(t, tg, dir, "stopped") })
}

// TestWatchedListsAfterOverflow: events the watcher never saw (here, a
// folder whose watch was dropped) are covered by the overflow that says
// so: the cache is dropped and the watcher starts afresh.
func TestWatchedListsAfterOverflow(t *testing.T) {
	tg, w, dir := watchedTarget(t, map[string]string{".gitignore": "*.log\n", "a/x.go": "x\n"})
	waitFor(t, func() bool { return checkLists(t, tg, dir, "start") }) // past the racy window of a new index
	noErr(t, w.fw.Remove(filepath.Join(dir, "a")))                     // its events are lost from here
	gittest.Write(t, dir, map[string]string{"a/unseen.txt": "u\n"})
	got, _ := ignored(t, tg)
	if un := previewed(t, tg); slices.Contains(un, "a/unseen.txt") {
		t.Fatalf("the test's lost event was seen anyway (%q, %q)", got, un)
	}
	w.fw.Errors <- fsnotify.ErrEventOverflow
	checkLists(t, tg, dir, "overflow")
	// The fresh watcher watches a/ again.
	gittest.Write(t, dir, map[string]string{"a/seen.txt": "s\n"})
	checkLists(t, tg, dir, "create after the restart")
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for range 100 {
		if ok() {
			return
		}
	}
	t.Fatal("condition never held")
}
