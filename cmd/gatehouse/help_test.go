package main

import (
	"flag"
	"strings"
	"testing"
)

// runForTest runs gatehouse in-process with empty standard input.
func runForTest(args ...string) (code int, stdout, stderr string) {
	return runWithStdin("", args...)
}

// Every command's -h lists every flag it declares, spelled as the usage
// lines spell them (--name), and a command with subcommands ("devices")
// lists them: before, "devices -h" showed only the relay's part, and flags
// printed as "-name".
func TestHelpListsEveryFlagAndSubcommand(t *testing.T) {
	for _, c := range commands {
		code, out, errOut := runForTest(append(strings.Fields(c.name), "-h")...)
		if code != exitOK {
			t.Fatalf("%s -h: exit %d: %s", c.name, code, errOut)
		}
		fs := newFlagSet(c)
		c.setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(out, "\n  --"+f.Name+" ") && !strings.Contains(out, "\n  --"+f.Name+"\n") {
				t.Errorf("%s -h does not list --%s:\n%s", c.name, f.Name, out)
			}
		})
		if parent, _, two := strings.Cut(c.name, " "); two && named(parent) != nil {
			if _, pout, _ := runForTest(parent, "-h"); !strings.Contains(pout, "gatehouse "+c.name+" ") {
				t.Errorf("%s -h does not list %q:\n%s", parent, c.name, pout)
			}
		}
	}
}

// gatehouse --version answers as gatehouse version does (gh's and git's
// habit); before, it was an unknown command.
func TestVersionFlag(t *testing.T) {
	_, want, _ := runForTest("version")
	for _, arg := range []string{"--version", "-version"} {
		code, out, errOut := runForTest(arg)
		if code != exitOK || out != want || !strings.HasPrefix(out, "gatehouse ") {
			t.Errorf("%s: exit %d %q %q, want %q", arg, code, out, errOut, want)
		}
	}
}
