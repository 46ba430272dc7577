package main

import (
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gatehouse": func() {
			os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
		},
	})
}

// TestScripts runs the command-line scripts in testdata/script, one file per
// behaviour or regression.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("GATEHOUSE_HOME", e.WorkDir+"/state")
			e.Setenv("HOME", e.WorkDir+"/home")
			return os.MkdirAll(e.WorkDir+"/home", 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// mknul FILE WORD... writes the words NUL-separated, as git -z does.
			"mknul": func(ts *testscript.TestScript, neg bool, args []string) {
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Join(args[1:], "\x00")+"\x00"), 0o644))
			},
		},
	})
}

// Every command has a useful -h: its usage line and a paragraph, on stdout,
// exit 0.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		var out, errOut strings.Builder
		code := run(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: os.Getenv},
			append(strings.Fields(c.name), "-h"))
		if code != exitOK || !strings.HasPrefix(out.String(), "Usage: gatehouse "+c.name) || len(out.String()) < 120 {
			t.Errorf("%s -h: exit %d\n%s%s", c.name, code, out.String(), errOut.String())
		}
		if c.summary == "" {
			t.Errorf("%s has no summary", c.name)
		}
	}
}
