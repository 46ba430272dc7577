package methods_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// A search follows .gitignore as git does: the files it finds are exactly
// the tracked files plus the untracked ones git does not ignore (git's own
// ls-files, the oracle), through every place git reads a pattern from:
// nested .gitignore files, negation, folder-only and anchored patterns,
// '**', escaped characters, .git/info/exclude and core.excludesFile. A
// tracked file that matches a pattern is still found, as git still tracks
// it. With includeIgnored every file is found.
func TestSearchAndGrepFollowGitignore(t *testing.T) {
	home := gittest.Home(t, "")
	files := map[string]string{
		".gitignore":              "*.log\n!keep.log\nbuild/\n/top-only.zz\n**/deep/**/gen.zz\n\\#hash.zz\nspace\\ .zz\n",
		"tracked-but-ignored.log": "needle\n",
		"src/.gitignore":          "local.zz\n!../top-only.zz\n",
		"src/a.zz":                "needle\n",
		"src/local.zz":            "needle\n",
		"src/build/x.zz":          "needle\n",
		"top-only.zz":             "needle\n",
		"src/top-only.zz":         "needle\n",
		"keep.log":                "needle\n",
		"other.log":               "needle\n",
		"node_modules/pkg/i.zz":   "needle\n",
		"x/deep/y/gen.zz":         "needle\n",
		"x/deep/y/not-gen.zz":     "needle\n",
		"#hash.zz":                "needle\n",
		"space .zz":               "needle\n",
		"excluded-by-info.zz":     "needle\n",
		"excluded-by-user.zz":     "needle\n",
		"plain.zz":                "needle\n",
		"nested/ok/file.zz":       "needle\n",
	}
	dir := gittest.Init(t, map[string]string{"README": "r\n"})
	gittest.Write(t, dir, files)
	gittest.Git(t, dir, "add", "-f", "tracked-but-ignored.log", ".gitignore", "src/.gitignore")
	gittest.Git(t, dir, "commit", "-qm", "ignore rules")
	if err := os.WriteFile(filepath.Join(dir, ".git/info/exclude"), []byte("excluded-by-info.zz\nnode_modules/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	userExcludes := filepath.Join(home, "user-excludes")
	if err := os.WriteFile(userExcludes, []byte("excluded-by-user.zz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "config", "--global", "core.excludesFile", userExcludes)

	// The oracle: what git itself lists as tracked or untracked-not-ignored.
	var want []string
	for _, args := range [][]string{{"ls-files", "-z"}, {"ls-files", "-z", "--others", "--exclude-standard"}} {
		for p := range strings.SplitSeq(gittest.Git(t, dir, args...), "\x00") {
			if p != "" {
				want = append(want, p)
			}
		}
	}
	slices.Sort(want)
	var all []string
	for p := range files {
		all = append(all, p)
	}
	all = append(all, "README")
	slices.Sort(all)
	if len(want) >= len(all)-5 {
		t.Fatalf("git ignores too little for the test to mean anything: %v", want)
	}

	h := newHost(t, trust.Full, dir)
	id := h.ids[dir]
	search := func(extra map[string]any) []string {
		var got []string
		p := map[string]any{"target": id, "query": "."}
		for k, v := range extra {
			p[k] = v
		}
		// Names with a dot: every file here has one, no folder does.
		p["query"] = "zz"
		for _, page := range pageAll(t, h, "files.search", p) {
			var s struct{ Paths []string }
			mustUnmarshal(t, page.Result, &s)
			got = append(got, s.Paths...)
		}
		p["query"] = ".log"
		for _, page := range pageAll(t, h, "files.search", p) {
			var s struct{ Paths []string }
			mustUnmarshal(t, page.Result, &s)
			got = append(got, s.Paths...)
		}
		p["query"] = "needle"
		var grepped []string
		for _, page := range pageAll(t, h, "files.grep", p) {
			var g struct{ Matches []struct{ Path string } }
			mustUnmarshal(t, page.Result, &g)
			for _, m := range g.Matches {
				grepped = append(grepped, m.Path)
			}
		}
		slices.Sort(got)
		slices.Sort(grepped)
		if !slices.Equal(got, grepped) {
			t.Fatalf("search and grep disagree:\n search %v\n grep   %v", got, grepped)
		}
		return got
	}
	var wantNamed []string
	for _, p := range want {
		if strings.Contains(p, "zz") || strings.HasSuffix(p, ".log") {
			wantNamed = append(wantNamed, p)
		}
	}
	if got := search(nil); !slices.Equal(got, wantNamed) {
		t.Fatalf("search without ignored files:\n got  %v\n want %v (git ls-files)", got, wantNamed)
	}
	var allNamed []string
	for _, p := range all {
		if strings.Contains(p, "zz") || strings.HasSuffix(p, ".log") {
			allNamed = append(allNamed, p)
		}
	}
	if got := search(map[string]any{"includeIgnored": true}); !slices.Equal(got, allNamed) {
		t.Fatalf("search with ignored files:\n got  %v\n want %v", got, allNamed)
	}
}
