package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// boolSpellings is every spelling of a boolean worth asking git about:
// words in any case, integers with k/m/g suffixes in decimal, octal and
// hex, signs, empty, overflow, and near misses.
var boolSpellings = []string{
	"true", "True", "TRUE", "yes", "Yes", "on", "ON", "1", "2", "-1", "+1", "1k", "1K", "1m", "1M", "1g", "1G",
	"0x1", "0X1", "010", "0x10", "0", "00", "-0", "0k", "0m", "0g", "0x0", "false", "False", "FALSE", "no", "No",
	"off", "OFF", "", "maybe", "tru", "yess", "1.0", "1kb", "1t", "0b1", "99999999999999999999", "1 k", "k",
	"0x", "-", "\"true\"", "on\\t",
}

// The gate's boolean reading is git's, spelling by spelling: each value is
// written into a config file and read by plain git with --type=bool.
func TestBooleansReadAsGitReadsThem(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	r := open(t, dir)
	var entries []entry
	for _, v := range boolSpellings {
		entries = append(entries, entry{key: "core.filemode", value: v, hasValue: true})
	}
	entries = append(entries, entry{key: "core.filemode"}) // no value
	bools, err := r.readBools(ctx, closed, &decision{}, entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		cfg := filepath.Join(t.TempDir(), "cfg")
		line := "\tk\n"
		if e.hasValue {
			line = "\tk = " + e.value + "\n"
		}
		if err := os.WriteFile(cfg, []byte("[t]\n"+line), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "config", "--file", cfg, "--type=bool", "--get", "t.k")
		out, gitErr := cmd.Output()
		// The value as git's own listing reports it (quotes and escapes
		// undone), which is what the gate is handed.
		listed, _ := exec.Command("git", "config", "--file", cfg, "--get", "t.k").Output()
		e.value = strings.TrimSuffix(string(listed), "\n")
		got, ok := bools.read(e)
		if e.hasValue && e.value != "true" && e.value != "false" {
			if _, asked := bools[e.value]; !asked {
				// The raw spelling was asked; the listed one is what a
				// decision sees. Ask for it too.
				more, err := r.readBools(ctx, closed, &decision{}, []entry{{key: "core.filemode", value: e.value, hasValue: true}})
				if err != nil {
					t.Fatal(err)
				}
				got, ok = more.read(e)
			}
		}
		want := strings.TrimSpace(string(out))
		switch {
		case gitErr != nil && ok:
			t.Errorf("%q: gate reads %v, git refuses it", line, got)
		case gitErr == nil && !ok:
			t.Errorf("%q: git reads %s, the gate does not read it", line, want)
		case gitErr == nil && (want == "true") != got:
			t.Errorf("%q: git reads %s, the gate %v", line, want, got)
		}
	}
}

// extensions.worktreeConfig in any spelling git reads as true makes git
// read config.worktree; a filter defined there ran on a view-grant status
// while the gate's own parser knew only true/yes/on/1. The gate now lists
// config.worktree whenever it exists.
func TestWorktreeConfigInEverySpelling(t *testing.T) {
	for _, v := range []string{"2", "1k", "0x1", "-1", "TRUE", "On"} {
		t.Run(v, func(t *testing.T) {
			gittest.Home(t, "")
			build := func(prog string) string {
				dir := repoWith(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=x\n"},
					"extensions.worktreeConfig", v)
				write(t, dir, map[string]string{".git/config.worktree": "[filter \"x\"]\n\tclean = " + prog + "\n"})
				dirty(t, dir)
				return dir
			}
			prog, marker := gittest.PayloadFile(t)
			dir := build(prog)
			_, _ = open(t, dir).Status(ctx, desktop)
			if !gittest.Fired(marker) {
				t.Fatal("not reproduced: git did not read config.worktree")
			}
			prog, marker = gittest.PayloadFile(t)
			r := open(t, build(prog))
			d, err := r.decide(ctx, closed, readGate, "x")
			if err != nil {
				t.Fatal(err)
			}
			if !hasOverride(d, "filter.x.clean") {
				t.Fatalf("the decision did not switch off config.worktree's filter: %+v", d.overrides)
			}
			if _, err := r.Status(ctx, closed); err != nil {
				t.Fatal(err)
			}
			if gittest.Fired(marker) {
				t.Fatal("the filter ran through the closed gate")
			}
		})
	}
}

// Section and key names in any letter case, subsections as written, and
// the deprecated [section.subsection] form (which lower-cases the
// subsection): the decision reads git's own listing, so each spelling's
// filter is switched off under the name git uses.
func TestConfigSpellingsGitAccepts(t *testing.T) {
	for _, c := range []struct{ config, attr, override string }{
		{"[FILTER \"x\"]\n\tCLEAN = %s\n", "x", "filter.x.clean"},
		{"[Filter \"X\"]\n\tClean = %s\n", "X", "filter.X.clean"},
		{"[filter.Y]\n\tclean = %s\n", "y", "filter.y.clean"},
		{"[filter \"z\"]\n\tclean = /bin/false\n[filter \"z\"]\n\tclean = %s\n", "z", "filter.z.clean"},
		{"[filter \"q\"]\n\tclean = \"%s\"\n", "q", "filter.q.clean"},
	} {
		t.Run(c.override, func(t *testing.T) {
			gittest.Home(t, "")
			build := func(prog string) string {
				dir := repoWith(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=" + c.attr + "\n"})
				f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(strings.ReplaceAll(c.config, "%s", prog))
				f.Close()
				dirty(t, dir)
				return dir
			}
			prog, marker := gittest.PayloadFile(t)
			_, _ = open(t, build(prog)).Status(ctx, desktop)
			if !gittest.Fired(marker) {
				t.Fatal("not reproduced")
			}
			prog, marker = gittest.PayloadFile(t)
			r := open(t, build(prog))
			d, err := r.decide(ctx, closed, readGate, "x")
			if err != nil {
				t.Fatal(err)
			}
			if !hasOverride(d, c.override) {
				t.Fatalf("no override %s: %+v", c.override, d.overrides)
			}
			if _, err := r.Status(ctx, closed); err != nil || gittest.Fired(marker) {
				t.Fatalf("closed: err %v, fired %v", err, gittest.Fired(marker))
			}
		})
	}
}

func hasOverride(d *decision, key string) bool {
	for _, o := range d.overrides {
		if o.Key == key && o.Value == "" {
			return true
		}
	}
	return false
}
