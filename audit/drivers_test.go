package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// appendFile adds text to the end of an existing file.
func appendFile(t *testing.T, name, text string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// finding returns the one finding of rule about kind=driver.
func finding(t *testing.T, r *Report, rule, message string) Finding {
	t.Helper()
	for _, f := range r.Findings {
		if f.Rule == rule && strings.Contains(f.Message, message) {
			return f
		}
	}
	t.Fatalf("no %s finding saying %q: %+v", rule, message, r.Findings)
	return Finding{}
}

// A repository's attributes select drivers by name, wherever git's config
// defines them: the audit reports each with the scope and file git names
// for it, the user's global config and a file it includes among them, and
// notes a driver nothing defines. The old audit matched its own parse of
// .gitattributes against the drivers the gate's decision had collected: a
// global driver was reported as "this checkout's own", with no file, and
// with the Read gate refusing the config (core.sshCommand) not at all
// (gate's TestAttributeUsesNameWhereEachDriverIsDefined runs the old
// parser). A filter in a file the user's config includes only on branches
// wt/* is named as included under a condition. Plain git says the same as
// the audit, and runs the global filter.
func TestAuditNamesWhereEachDriverIsDefined(t *testing.T) {
	for _, refused := range []bool{false, true} {
		t.Run(map[bool]string{true: "the Read gate refuses the config", false: "the config is read"}[refused], func(t *testing.T) {
			home := gittest.Home(t, "")
			prog, _ := gittest.PayloadFile(t)
			globProg, marker := gittest.PayloadFile(t)
			incs := t.TempDir()
			inc, cond := filepath.Join(incs, "included.gitconfig"), filepath.Join(incs, "wt.gitconfig")
			gittest.Write(t, incs, map[string]string{
				"included.gitconfig": "[filter \"incl\"]\n\tclean = " + prog + "\n",
				"wt.gitconfig":       "[filter \"cond\"]\n\tclean = " + prog + "\n",
			})
			dir := gittest.Init(t, map[string]string{
				"a.txt": "a\n", "sub/b.txt": "b\n", "c.bin": "c\n", "d.dat": "d\n", "e.md": "e\n", "g.conf": "g\n", "h.cfg": "h\n",
				".gitattributes": "*.txt filter=glob\n*.bin filter=loc\n*.dat filter=nowhere\n*.md filter=incl\n*.cfg filter=cond\n",
			})
			gittest.Git(t, dir, "config", "filter.loc.clean", prog)
			if refused {
				gittest.Git(t, dir, "config", "core.sshCommand", "ssh")
			}
			gittest.Write(t, home, map[string]string{"attrs": "*.conf diff=mine\n"})
			appendFile(t, filepath.Join(home, ".gitconfig"), fmt.Sprintf("[filter \"glob\"]\n\tclean = %s\n\tsmudge = %s\n[diff \"mine\"]\n\ttextconv = %s\n[include]\n\tpath = %s\n[includeIf \"onbranch:wt/**\"]\n\tpath = %s\n[core]\n\tattributesFile = %s\n",
				globProg, globProg, prog, inc, cond, filepath.Join(home, "attrs")))

			r := run(t, dir)
			got := rules(r)
			for rule, want := range map[string]string{
				"attributes-driver":           ".gitattributes",
				"attributes-user-driver":      ".gitattributes,.gitattributes,.gitattributes,g.conf",
				"attributes-undefined-driver": ".gitattributes",
			} {
				if strings.Join(got[rule], ",") != want {
					t.Errorf("%s: %q, want %q", rule, got[rule], want)
				}
			}
			for _, w := range []struct {
				rule, about, says string
				line              int
				level             Level
			}{
				{"attributes-user-driver", `filter driver "glob"`, `makes 2 tracked files (a.txt, sub/b.txt) use the filter driver "glob", which your own git config defines, not the repository's (filter.glob.clean, filter.glob.smudge in the global config ~/.gitconfig)`, 1, Warning},
				{"attributes-user-driver", `filter driver "incl"`, "filter.incl.clean in the global config " + inc, 4, Warning},
				{"attributes-user-driver", `diff driver "mine"`, `is a tracked file whose attributes select the diff driver "mine" (through your own attributes file: no attributes line in the checkout names it), which your own git config defines, not the repository's (diff.mine.textconv in the global config ~/.gitconfig)`, 0, Warning},
				{"attributes-driver", `filter driver "loc"`, "makes c.bin use the filter driver \"loc\", which this checkout's own config defines (filter.loc.clean in the local config .git/config)", 2, Warning},
				{"attributes-undefined-driver", `filter driver "nowhere"`, "which no git config defines, so git runs no program for it", 3, Note},
				{"attributes-user-driver", `filter driver "cond"`, "filter.cond.clean in the global config " + cond + ", included under a condition that does not hold here", 5, Warning},
			} {
				f := finding(t, r, w.rule, w.about)
				if !strings.Contains(f.Message, w.says) || f.Line != w.line || f.Level != w.level {
					t.Errorf("%s %s: %s line %d, %s\nwant %s line %d saying %q", w.rule, w.about, f.Level, f.Line, f.Message, w.level, w.line, w.says)
				}
			}
			// What git itself says: the attribute, and where the driver is.
			if out := gittest.Git(t, dir, "check-attr", "filter", "--", "a.txt"); !strings.Contains(out, "filter: glob") {
				t.Fatalf("plain git check-attr: %q", out)
			}
			if out := gittest.Git(t, dir, "config", "--show-scope", "--show-origin", "--get-regexp", `^filter\.(glob|incl)\.`); !strings.Contains(out, "global\tfile:"+filepath.Join(home, ".gitconfig")+"\tfilter.glob.clean") ||
				!strings.Contains(out, "global\tfile:"+inc+"\tfilter.incl.clean") {
				t.Fatalf("plain git config: %q", out)
			}
			// git reads the conditional file on a wt/ branch only.
			cond1 := gittest.Git(t, dir, "!", "config", "--show-scope", "--show-origin", "--get-regexp", `^filter\.cond\.`)
			gittest.Git(t, dir, "switch", "-q", "-c", "wt/x")
			cond2 := gittest.Git(t, dir, "config", "--show-scope", "--show-origin", "--get-regexp", `^filter\.cond\.`)
			if cond1 != "" || !strings.Contains(cond2, "global\tfile:"+cond+"\tfilter.cond.clean") {
				t.Fatalf("plain git config on main: %q, on wt/x: %q", cond1, cond2)
			}
			if gittest.Fired(marker) {
				t.Fatal("the audit ran the global filter")
			}
			gittest.Write(t, dir, map[string]string{"a.txt": "changed\n"})
			gittest.Git(t, dir, "add", "a.txt")
			if !gittest.Fired(marker) {
				t.Fatal("plain git add did not run the global filter: the findings above are about nothing")
			}
		})
	}
}
