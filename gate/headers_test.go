package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// wantSection is one section of real git's output as the splitter must read
// it: its first line, its distinct names (sorted), and whether they are
// certain.
type wantSection struct {
	first string
	names string // distinct names, sorted, joined by "|"
	known bool
}

// readSections splits a patch and describes each section as wantSection.
func readSections(patch string) (string, []wantSection) {
	head, secs := splitPatch([]byte(patch))
	var got []wantSection
	for _, s := range secs {
		first, _, _ := strings.Cut(string(s.text), "\n")
		got = append(got, wantSection{first, distinct(s.names), s.known})
	}
	return string(head), got
}

func distinct(names []string) string {
	n := slices.Clone(names)
	slices.Sort(n)
	return strings.Join(slices.Compact(n), "|")
}

// gitDiff runs plain git diff with the gate's diff flags.
func gitDiff(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return git(t, dir, append(append([]string{"diff", "--find-renames"}, diffFlags...), args...)...)
}

// gitShow runs plain git show with the gate's show flags (extra flags last,
// so they win).
func gitShow(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append(append(append([]string{"show"}, showFlags...), diffFlags...), extra...)
	out := git(t, dir, append(args, "HEAD")...)
	_, patch, _ := strings.Cut(out, "\x1f\n")
	return strings.TrimPrefix(patch, "\n")
}

// conflict makes a checkout whose merge of "side" into main conflicts on
// each of files (name → main's content, side's content).
func conflict(t *testing.T, files map[string][2]string) string {
	t.Helper()
	base := map[string]string{"README.md": "hello\n"}
	for n := range files {
		base[n] = "base\n"
	}
	dir := gittest.Init(t, base)
	git(t, dir, "checkout", "-q", "-b", "side")
	for n, c := range files {
		write(t, dir, map[string]string{n: c[1]})
	}
	git(t, dir, "commit", "-q", "-am", "side")
	git(t, dir, "checkout", "-q", "main")
	for n, c := range files {
		write(t, dir, map[string]string{n: c[0]})
	}
	git(t, dir, "commit", "-q", "-am", "main")
	git(t, dir, "!", "merge", "-q", "side")
	return dir
}

// mergeCommit resolves a conflict with resolved (name → content) and
// commits the merge.
func mergeCommit(t *testing.T, dir string, resolved map[string]string) {
	t.Helper()
	write(t, dir, resolved)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "merge")
}

// TestHeadersOfRealGit proves the splitter reads every header form git
// 2.39 writes, from git itself: plain and quoted names, mode changes, new,
// deleted, binary, symlink and gitlink entries, renames and copies
// (including a rename whose names hold " b/"), unmerged paths in a
// conflicted checkout (diff --cc), and merges shown dense (--cc) and full
// (-c), with renames from a parent (--combined-all-paths).
func TestHeadersOfRealGit(t *testing.T) {
	gittest.Home(t, "")
	for _, c := range []struct {
		name  string
		patch func(t *testing.T) string
		head  string
		want  []wantSection
	}{
		{"modified", func(t *testing.T) string {
			d := gittest.Init(t, map[string]string{"x": "1\n"})
			write(t, d, map[string]string{"x": "2\n"})
			return gitDiff(t, d)
		}, "", []wantSection{{"diff --git a/x b/x", "x", true}}},
		{"space", func(t *testing.T) string {
			d := gittest.Init(t, map[string]string{"a b": "1\n"})
			write(t, d, map[string]string{"a b": "2\n"})
			return gitDiff(t, d)
		}, "", []wantSection{{"diff --git a/a b b/a b", "a b", true}}},
		{"quoted", func(t *testing.T) string {
			files := map[string]string{"q\"x": "1\n", "t\tab": "1\n", "é.env": "1\n", `back\slash`: "1\n"}
			d := gittest.Init(t, files)
			for n := range files {
				files[n] = "2\n"
			}
			write(t, d, files)
			return gitDiff(t, d)
		}, "", []wantSection{
			{`diff --git "a/back\\slash" "b/back\\slash"`, `back\slash`, true},
			{`diff --git "a/q\"x" "b/q\"x"`, `q"x`, true},
			{`diff --git "a/t\tab" "b/t\tab"`, "t\tab", true},
			{`diff --git "a/\303\251.env" "b/\303\251.env"`, "é.env", true},
		}},
		{"quotePath-off", func(t *testing.T) string {
			d := gittest.Init(t, map[string]string{"é.env": "1\n"})
			write(t, d, map[string]string{"é.env": "2\n"})
			return git(t, d, append([]string{"-c", "core.quotePath=false", "diff"}, diffFlags...)...)
		}, "", []wantSection{{"diff --git a/é.env b/é.env", "é.env", true}}},
		{"mode", func(t *testing.T) string {
			d := gittest.Init(t, map[string]string{".env": "1\n"})
			if err := os.Chmod(filepath.Join(d, ".env"), 0o755); err != nil {
				t.Fatal(err)
			}
			return gitDiff(t, d)
		}, "", []wantSection{{"diff --git a/.env b/.env", ".env", true}}},
		{"new-deleted-binary-symlink-gitlink", func(t *testing.T) string {
			d := gittest.Init(t, map[string]string{"gone.env": "SECRET=1\n", "b.bin": "a\x00b"})
			write(t, d, map[string]string{"n.env": "SECRET=2\n", "b.bin": "c\x00d"})
			if err := os.Symlink(".env", filepath.Join(d, "link")); err != nil {
				t.Fatal(err)
			}
			git(t, d, "rm", "-q", "gone.env")
			git(t, d, "add", "-A")
			git(t, d, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",sub")
			return gitDiff(t, d, "--cached")
		}, "", []wantSection{
			{"diff --git a/b.bin b/b.bin", "b.bin", true},
			{"diff --git a/gone.env b/gone.env", "gone.env", true},
			{"diff --git a/link b/link", "link", true},
			{"diff --git a/n.env b/n.env", "n.env", true},
			{"diff --git a/sub b/sub", "sub", true},
		}},
		{"rename-with-b-slash", func(t *testing.T) string {
			d := gittest.Init(t, map[string]string{"x b/y": "SECRET=1\n"})
			git(t, d, "mv", "x b", "z b")
			git(t, d, "mv", "z b/y", "z b/w")
			return gitDiff(t, d, "--cached")
		}, "", []wantSection{{"diff --git a/x b/y b/z b/w", "x b/y|z b/w", true}}},
		{"rename-quoted", func(t *testing.T) string {
			d := gittest.Init(t, map[string]string{".env": "SECRET=1\nA\nB\nC\n"})
			git(t, d, "mv", ".env", "t\tab")
			write(t, d, map[string]string{"t\tab": "SECRET=1\nA\nB\nD\n"})
			git(t, d, "add", "-A")
			return gitDiff(t, d, "--cached")
		}, "", []wantSection{{`diff --git a/.env "b/t\tab"`, ".env|t\tab", true}}},
		{"copy", func(t *testing.T) string {
			d := gittest.Init(t, map[string]string{".env": "SECRET=1\nA\nB\nC\n"})
			write(t, d, map[string]string{"copy.txt": "SECRET=1\nA\nB\nC\n"})
			git(t, d, "add", "-A")
			return gitDiff(t, d, "--cached", "--find-copies-harder")
		}, "", []wantSection{{"diff --git a/.env b/copy.txt", ".env|copy.txt", true}}},
		{"unmerged-worktree", func(t *testing.T) string {
			d := conflict(t, map[string][2]string{".env": {"SECRET=main\n", "SECRET=side\n"}, "t\tab": {"main\n", "side\n"}})
			return gitDiff(t, d)
		}, "", []wantSection{
			{"diff --cc .env", ".env", true},
			{`diff --cc "t\tab"`, "t\tab", true},
		}},
		{"unmerged-index", func(t *testing.T) string {
			d := conflict(t, map[string][2]string{".env": {"SECRET=main\n", "SECRET=side\n"}})
			return gitDiff(t, d, "--cached")
		}, "* Unmerged path .env\n", nil},
		{"merge-dense", func(t *testing.T) string {
			d := conflict(t, map[string][2]string{".env": {"SECRET=main\n", "SECRET=side\n"}, "t\tab": {"main\n", "side\n"}})
			mergeCommit(t, d, map[string]string{".env": "SECRET=merged\n", "t\tab": "merged\n"})
			return gitShow(t, d)
		}, "", []wantSection{
			{"diff --cc .env", ".env", true},
			{`diff --cc "t\tab"`, "t\tab", true},
		}},
		{"merge-combined", func(t *testing.T) string {
			d := conflict(t, map[string][2]string{".env": {"SECRET=main\n", "SECRET=side\n"}})
			mergeCommit(t, d, map[string]string{".env": "SECRET=merged\n"})
			return gitShow(t, d, "-c")
		}, "", []wantSection{{"diff --combined .env", ".env", true}}},
		{"merge-binary-deleted-new", func(t *testing.T) string {
			d := conflict(t, map[string][2]string{"b.bin": {"m\x00", "s\x00"}, ".env": {"SECRET=main\n", "SECRET=side\n"}})
			write(t, d, map[string]string{"b.bin": "merged\x00", "new.env": "SECRET=new\n"})
			git(t, d, "rm", "-q", "-f", ".env")
			mergeCommit(t, d, nil)
			return gitShow(t, d)
		}, "", []wantSection{
			{"diff --cc .env", ".env", true},
			{"diff --cc b.bin", "b.bin", true},
			{"diff --cc new.env", "new.env", true},
		}},
		{"merge-rename-from-a-secret", func(t *testing.T) string {
			d := renamedMerge(t)
			return gitShow(t, d)
		}, "", []wantSection{{"diff --cc notes.txt", ".env|notes.txt", true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			patch := c.patch(t)
			head, got := readSections(patch)
			if head != c.head || !slices.Equal(got, c.want) {
				t.Fatalf("git wrote:\n%s\nread head %q sections %+v\nwant head %q sections %+v", patch, head, got, c.head, c.want)
			}
		})
	}
}

// renamedMerge makes a merge commit that renames .env (holding a secret
// line in both parents) to notes.txt and drops the secret line: the
// combined diff of notes.txt shows the parents' lines, secret included.
func renamedMerge(t *testing.T) string {
	t.Helper()
	var lines []string
	for i := range 20 {
		lines = append(lines, strings.Repeat("x", i+1))
	}
	body := strings.Join(lines, "\n") + "\nSECRET=parents\n"
	d := gittest.Init(t, map[string]string{".env": body})
	git(t, d, "checkout", "-q", "-b", "side")
	write(t, d, map[string]string{".env": strings.Replace(body, "xx\n", "side\n", 1)})
	git(t, d, "commit", "-q", "-am", "side")
	git(t, d, "checkout", "-q", "main")
	write(t, d, map[string]string{".env": strings.Replace(body, "x\nxx", "x\nmain", 1)})
	git(t, d, "commit", "-q", "-am", "main")
	git(t, d, "!", "merge", "-q", "side")
	resolved := strings.Replace(strings.Replace(body, "SECRET=parents\n", "", 1), "x\nxx\n", "x\nmerged\n", 1)
	write(t, d, map[string]string{".env": resolved})
	git(t, d, "add", ".env")
	git(t, d, "mv", ".env", "notes.txt")
	mergeCommit(t, d, nil)
	return d
}
