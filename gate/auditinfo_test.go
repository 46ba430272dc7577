package gate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// AttributeUses reads the git folder's info/attributes with gatehouse's own
// read, which refused a link only at its last step: a symlinked info/ was
// followed, and attributes from any folder were reported as the
// repository's. It now reads the file only when the gate accepts the
// folder's shape (and from the common folder, where git reads it).
func TestAttributeUsesNeverReadsThroughALinkedInfo(t *testing.T) {
	gittest.Home(t, "")
	prog, _ := gittest.PayloadFile(t)
	build := func(t *testing.T) (dir, info string) {
		dir = repoWith(t, map[string]string{"a.txt": "a\n"}, "filter.evil.clean", prog)
		info = filepath.Join(t.TempDir(), "info")
		write(t, info, map[string]string{"attributes": "*.txt filter=evil\n"})
		return dir, info
	}
	uses := func(t *testing.T, dir string) int {
		a, err := open(t, dir).AttributeUses(ctx, closed, []string{"a.txt"})
		if err != nil {
			t.Fatal(err)
		}
		return len(a.Uses)
	}
	dir, info := build(t)
	write(t, dir, map[string]string{".git/info/attributes": read(t, filepath.Join(info, "attributes"))})
	if uses(t, dir) != 1 {
		t.Fatal("not reproduced: the git folder's own info/attributes is not read")
	}
	dir, info = build(t)
	linkOut(t, info, filepath.Join(dir, ".git", "info"))
	// The old read, on the same path: the link is followed.
	if data, err := fsguard.ReadMetadata(filepath.Join(dir, ".git", "info", "attributes"), maxAttributes); err != nil || !strings.Contains(string(data), "filter=evil") {
		t.Fatalf("not reproduced: the old read did not follow the symlinked .git/info: %q, %v", data, err)
	}
	if n := uses(t, dir); n != 0 {
		t.Fatalf("%d uses read through a symlinked .git/info", n)
	}
}

// oldAttributeUses is AttributeUses before it asked git: gatehouse's own
// parser of the tracked .gitattributes lines, matched against the drivers
// the decision knew of (d.defined, the repository's own, and the user's
// only when the Read gate let the config through). Kept to show what it
// missed.
func oldAttributeUses(t *testing.T, r *Repo, files []string) []string {
	t.Helper()
	d, err := r.auditDecision(ctx, closed)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if f != ".gitattributes" && !strings.HasSuffix(f, "/.gitattributes") {
			continue
		}
		data, err := r.root.ReadFile(trust.Full, f, maxAttributes)
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			for _, attr := range fields[1:] {
				if kind, name, ok := strings.Cut(attr, "="); ok && d.defined[kind][name] {
					out = append(out, attr)
				}
			}
		}
	}
	return out
}

// driverWorld is a checkout whose attributes select a filter defined in
// the global config (glob), one in a file the global config includes
// (incl), one in the repository's own config (loc), one nowhere
// (nowhere), one through a macro (mac, global), a diff driver through the
// user's own core.attributesFile (mine, global), and a filter in a file the
// global config includes only on branches wt/* (cond). It returns the
// checkout, the global config file, the included files, and the marker of
// the program the global filter runs.
func driverWorld(t *testing.T, config ...string) (dir, global, inc, cond, marker string) {
	t.Helper()
	home := gittest.Home(t, "")
	prog, _ := gittest.PayloadFile(t)
	globProg, marker := gittest.PayloadFile(t)
	incs := t.TempDir()
	inc, cond = filepath.Join(incs, "included.gitconfig"), filepath.Join(incs, "wt.gitconfig")
	write(t, incs, map[string]string{
		"included.gitconfig": "[filter \"incl\"]\n\tclean = " + prog + "\n",
		"wt.gitconfig":       "[filter \"cond\"]\n\tclean = " + prog + "\n",
	})
	write(t, home, map[string]string{"attrs": "*.conf diff=mine\n"})
	dir = repoWith(t, map[string]string{
		"a.txt": "a\n", "sub/b.txt": "b\n", "c.bin": "c\n", "d.dat": "d\n", "e.md": "e\n", "f.iso": "f\n", "g.conf": "g\n", "h.cfg": "h\n",
		".gitattributes": "*.txt filter=glob\n*.bin filter=loc\n*.dat filter=nowhere\n*.md filter=incl\n[attr]big filter=mac\n*.iso big\n*.cfg filter=cond\n",
	}, append([]string{"filter.loc.clean", prog}, config...)...)
	global = filepath.Join(home, ".gitconfig")
	userConfig(t, fmt.Sprintf("[filter \"glob\"]\n\tclean = %s\n[filter \"mac\"]\n\tsmudge = %s\n[diff \"mine\"]\n\ttextconv = %s\n[include]\n\tpath = %s\n[includeIf \"onbranch:wt/**\"]\n\tpath = %s\n[core]\n\tattributesFile = %s\n",
		globProg, prog, prog, inc, cond, filepath.Join(home, "attrs")))
	return dir, global, inc, cond, marker
}

// The attributes that select a driver are git's to decide, and where a
// driver is defined is git's config to say. The old parser knew only the
// drivers the decision had collected: with the Read gate refusing the
// repository's config (core.sshCommand here), the user's drivers were never
// listed, and a .gitattributes selecting a global filter got no word; with
// the config read, the global ones were reported as the checkout's own,
// with no file. A filter in a file the user includes only on some branches
// is named too, as included under a condition: git reads it there, and the
// gate switches it off (everyUserInclude). Plain git shows the global
// filter is selected and runs it.
func TestAttributeUsesNameWhereEachDriverIsDefined(t *testing.T) {
	for _, refused := range []bool{true, false} {
		t.Run(map[bool]string{true: "the Read gate refuses the config", false: "the config is read"}[refused], func(t *testing.T) {
			var cfg []string
			if refused {
				cfg = []string{"core.sshCommand", "ssh"}
			}
			dir, global, inc, cond, marker := driverWorld(t, cfg...)
			r := open(t, dir)
			files := strings.Split(strings.TrimSpace(git(t, dir, "ls-files")), "\n")
			old := oldAttributeUses(t, r, files)
			if refused && (slices.Contains(old, "filter=glob") || !slices.Contains(old, "filter=loc")) {
				t.Fatalf("not reproduced: the old parser, with the config refused, gave %v", old)
			}
			if !refused && !slices.Contains(old, "filter=glob") {
				t.Fatalf("not reproduced: the old parser, with the config read, gave %v", old)
			}
			if out := git(t, dir, "check-attr", "filter", "--", "a.txt"); !strings.Contains(out, "filter: glob") {
				t.Fatalf("plain git: %q", out)
			}

			a, err := r.AttributeUses(ctx, closed, files)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]AttributeUse{}
			for _, u := range a.Uses {
				got[u.Kind+"="+u.Driver] = u
			}
			canon, _ := filepath.EvalSymlinks(dir)
			for _, w := range []struct {
				use, file, path string
				line            int
				files           []string
				defined         []DriverEntry
			}{
				{"filter=glob", "a.txt", ".gitattributes", 1, []string{"a.txt", "sub/b.txt"}, []DriverEntry{{"filter.glob.clean", "global", global, false}}},
				{"filter=incl", "e.md", ".gitattributes", 4, []string{"e.md"}, []DriverEntry{{"filter.incl.clean", "global", inc, false}}},
				{"filter=loc", "c.bin", ".gitattributes", 2, []string{"c.bin"}, []DriverEntry{{"filter.loc.clean", "local", filepath.Join(canon, ".git", "config"), false}}},
				{"filter=nowhere", "d.dat", ".gitattributes", 3, []string{"d.dat"}, []DriverEntry{}},
				{"filter=mac", "f.iso", ".gitattributes", 5, []string{"f.iso"}, []DriverEntry{{"filter.mac.smudge", "global", global, false}}},
				{"diff=mine", "g.conf", "", 0, []string{"g.conf"}, []DriverEntry{{"diff.mine.textconv", "global", global, false}}},
				{"filter=cond", "h.cfg", ".gitattributes", 7, []string{"h.cfg"}, []DriverEntry{{"filter.cond.clean", "global", cond, true}}},
			} {
				u, ok := got[w.use]
				if !ok {
					t.Errorf("%s: not reported; got %+v", w.use, a.Uses)
					continue
				}
				if u.Path != w.path || u.Line != w.line || !slices.Equal(u.Files, w.files) || u.Count != len(w.files) || !slices.Equal(u.Defined, w.defined) {
					t.Errorf("%s:\n got %+v\nwant path %q line %d files %v defined %+v", w.use, u, w.path, w.line, w.files, w.defined)
				}
			}
			if len(a.Uses) != 7 || a.Truncated {
				t.Errorf("%d uses (truncated %v): %+v", len(a.Uses), a.Truncated, a.Uses)
			}
			if gittest.Fired(marker) {
				t.Fatal("asking about the attributes ran the global filter")
			}
			write(t, dir, map[string]string{"a.txt": "changed\n"})
			git(t, dir, "add", "a.txt")
			if !gittest.Fired(marker) {
				t.Fatal("plain git add did not run the global filter: the check above proves nothing")
			}
		})
	}
}

// The files go to git check-attr in batches, each bounded in count and
// bytes; a batch whose answer passes the output bound is asked again in
// halves, a file whose answer alone passes it is left out, the runs are
// bounded in all, and so are the drivers and the entries per driver kept:
// what was left out is reported truncated. Counted in git processes and
// bytes, not time.
func TestAttributeUsesAreBounded(t *testing.T) {
	gittest.Home(t, "")
	files := map[string]string{".gitattributes": "*.a filter=one\n*.b filter=two\n*.c filter=three\n"}
	var names []string
	for i := range 7 {
		name := fmt.Sprintf("f%d.%c", i, "abc"[i%3])
		files[name] = "x\n"
		names = append(names, name)
	}
	dir := repoWith(t, files, "filter.one.clean", "true", "filter.one.smudge", "true", "filter.one.required", "false")
	r := open(t, dir)
	settled(t, filepath.Join(dir, ".git", "config"))
	if _, err := r.AttributeUses(ctx, closed, names); err != nil { // the decision is cached: only the calls counted below start
		t.Fatal(err)
	}
	// listing is how many git processes list the config once drivers are
	// found: the whole listing and the user's includes (everyUserInclude),
	// which depend on the machine's own config files. Counted once below.
	listing := int64(-1)
	ask := func(what string, names []string, b attrBounds, uses int, truncated bool, checkAttr int64) *Attributes {
		t.Helper()
		before := r.started.Load()
		a, err := r.attributeUses(ctx, closed, names, b)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n := r.started.Load() - before
		if listing < 0 {
			listing = n - checkAttr
		}
		want := checkAttr
		if uses > 0 {
			want += listing
		}
		if len(a.Uses) != uses || a.Truncated != truncated || n != want {
			t.Fatalf("%s: %d uses (want %d), truncated %v (want %v), %d git processes (want %d check-attr, %d to list the config): %+v",
				what, len(a.Uses), uses, a.Truncated, truncated, n, checkAttr, listing, a)
		}
		return a
	}
	a := ask("unbounded", names, defaultAttrBounds, 3, false, 1)
	if u := a.Uses[0]; u.Driver != "one" || u.Count != 3 || !slices.Equal(u.Files, []string{"f0.a", "f3.a", "f6.a"}) {
		t.Fatalf("%+v", u)
	}
	b := defaultAttrBounds
	b.batchFiles = 2
	ask("in batches of 2", names, b, 3, false, 4)
	b = defaultAttrBounds
	b.batchBytes = 1 // one file a batch, whatever its name's length
	ask("one file a batch", names[:2], b, 2, false, 2)
	// "f0.a\0filter\0one\0" is 16 bytes: 7 files (112) and 3 (48) pass
	// a 40-byte bound and are asked again, 3 then 1 at a time.
	b = defaultAttrBounds
	b.maxOut = 40
	ask("cut answers asked again in halves", names, b, 3, false, 1+1+7)
	b.maxOut = 10 // no one file's answer fits: all left out, and no config is listed
	ask("answers too long for one file", names, b, 0, true, 1+1+7)
	b = defaultAttrBounds
	b.batchFiles, b.runs = 2, 3
	ask("three runs at most", names, b, 3, true, 3) // f0..f5 asked: every driver seen
	b = defaultAttrBounds
	b.uses, b.entries = 2, 2
	a = ask("two drivers and two entries at most", names, b, 2, true, 1)
	if len(a.Uses[0].Defined) != 2 {
		t.Fatalf("%+v", a.Uses[0])
	}
	ask("no files", nil, defaultAttrBounds, 0, false, 0)
}

// BenchmarkAttributeUses: git check-attr --all over the 100,000 tracked
// files of BenchmarkAudit's repository (no attributes), through the closed
// gate, as the audit asks it.
func BenchmarkAttributeUses(b *testing.B) {
	dir := gittest.BenchRepo(b, 100_000, 2_000, false)
	r := open(b, dir)
	tracked, err := r.Tracked(ctx, closed)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if a, err := r.AttributeUses(ctx, closed, tracked.Index); err != nil || len(a.Uses) != 0 || a.Truncated {
			b.Fatalf("%+v, %v", a, err)
		}
	}
}
