package testenv

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// outcome records what Require did to a test instead of doing it.
type outcome struct {
	testing.TB
	skipped, failed string
}

func (o *outcome) Helper() {}

func (o *outcome) Skipf(format string, args ...any) {
	o.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (o *outcome) Fatalf(format string, args ...any) {
	o.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (o *outcome) Fatal(args ...any) {
	o.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

// run calls Require on a recorder in a goroutine of its own, since a skip or
// a failure ends the goroutine as it ends a test's.
func run(t *testing.T, env, what string, have bool) *outcome {
	t.Setenv(Variable, env)
	o := &outcome{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Require(o, what, have, "the machine has none")
	}()
	<-done
	return o
}

func TestRequire(t *testing.T) {
	for _, c := range []struct {
		env, what string
		have      bool
		want      string // "", "skip" or "fail"
	}{
		{"", "landlock", true, ""},
		{"", "landlock", false, "skip"},
		{"root", "landlock", false, "skip"},
		{"landlock", "landlock", false, "fail"},
		{" root , landlock ", "landlock", false, "fail"},
		{"landlock,root", "root", true, ""},
		{"landlok", "landlock", true, "fail"}, // a typo cannot turn the requirement off
		{"", "wings", true, "fail"},
	} {
		o := run(t, c.env, c.what, c.have)
		got := ""
		switch {
		case o.failed != "":
			got = "fail"
		case o.skipped != "":
			got = "skip"
		}
		if got != c.want {
			t.Errorf("%s=%q, Require(%q, have %v): %s (skip %q, failure %q), want %q",
				Variable, c.env, c.what, c.have, got, o.skipped, o.failed, c.want)
		}
		if msg := o.skipped + o.failed; got != "" && !strings.Contains(msg, Variable) {
			t.Errorf("%s=%q, Require(%q): %q does not name %s", Variable, c.env, c.what, msg, Variable)
		}
	}
}
