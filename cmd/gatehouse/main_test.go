package main

import (
	"flag"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/leakcheck"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/lan"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// leakcheck: the tests fail if a process they started (a background
	// gatehouse serve, a git it ran) outlives them (internal/leakcheck).
	testscript.Main(leakcheck.Wrap(m), map[string]func(){
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
			// mklog N appends N requests to the state folder's request log.
			"mklog": func(ts *testscript.TestScript, neg bool, args []string) {
				n, _ := strconv.Atoi(args[0])
				l, err := rpc.OpenRequestLog(ts.Getenv("GATEHOUSE_HOME"))
				ts.Check(err)
				for i := range n {
					ts.Check(l.Append(rpc.LogEntry{Time: time.Now().UTC(), Device: "phone-" + strconv.Itoa(i%2),
						Fingerprint: "00112233445566778899aabbccddeeff", Method: "git.status", Target: "t1", Code: "OK", MS: 3}))
				}
				ts.Check(l.Close())
			},
			// cutlog removes the second line of the request log.
			"cutlog": func(ts *testscript.TestScript, neg bool, args []string) {
				p := ts.Getenv("GATEHOUSE_HOME") + "/requests.log"
				data, err := os.ReadFile(p)
				ts.Check(err)
				lines := strings.SplitAfter(string(data), "\n")
				ts.Check(os.WriteFile(p, []byte(lines[0]+strings.Join(lines[2:], "")), 0o600))
			},
			// waitfile FILE waits up to 20 s for FILE to exist (a background
			// command's ready file).
			"waitfile": func(ts *testscript.TestScript, neg bool, args []string) {
				deadline := time.Now().Add(20 * time.Second)
				for {
					if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
						return
					}
					if time.Now().After(deadline) {
						ts.Fatalf("%s did not appear", args[0])
					}
					time.Sleep(20 * time.Millisecond)
				}
			},
			// envfrom NAME FILE [REGEXP] sets $NAME to FILE's first line, or to
			// the first group REGEXP matches in FILE.
			"envfrom": func(ts *testscript.TestScript, neg bool, args []string) {
				data := ts.ReadFile(args[1])
				v := strings.TrimSpace(strings.SplitN(data, "\n", 2)[0])
				if len(args) == 3 {
					m := regexp.MustCompile(args[2]).FindStringSubmatch(data)
					if m == nil {
						ts.Fatalf("%s does not match %s", args[1], args[2])
					}
					v = m[1]
				}
				ts.Setenv(args[0], v)
			},
			// waitrequest NAME waits up to 20 s for a device to ask the
			// running serve (GATEHOUSE_HOME's) to pair, and sets $NAME to its
			// pair code's digits, as the person reads it in 'gatehouse devices'.
			"waitrequest": func(ts *testscript.TestScript, neg bool, args []string) {
				for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					ans, err := lan.Control(ts.Getenv("GATEHOUSE_HOME"), lan.ControlRequest{Op: "status"})
					if err == nil && len(ans.Status.Requests) > 0 {
						ts.Setenv(args[0], strings.ReplaceAll(ans.Status.Requests[0].Code, " ", ""))
						return
					}
					if time.Now().After(deadline) {
						ts.Fatalf("no device asked to pair")
					}
				}
			},
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

var update = flag.Bool("update", false, "rewrite golden files")

// The whole policy (methods, forced options, allowlist, refusals, program
// keys) is a golden file: it changes only on purpose, in review.
func TestPolicyGolden(t *testing.T) {
	for _, c := range []struct{ format, file string }{{"text", "testdata/policy.golden"}, {"json", "testdata/policy.golden.json"}} {
		var out, errOut strings.Builder
		if code := run(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: os.Getenv},
			[]string{"policy", "--format", c.format}); code != exitOK {
			t.Fatalf("policy: %d %s", code, errOut.String())
		}
		if *update {
			if err := os.WriteFile(c.file, []byte(out.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != out.String() {
			t.Errorf("gatehouse policy --format %s differs from %s; if the change is meant, run go test ./cmd/gatehouse -run TestPolicyGolden -update and review the diff", c.format, c.file)
		}
	}
}
