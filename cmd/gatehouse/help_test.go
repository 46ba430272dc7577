package main

import (
	"context"
	"flag"
	"io"
	"log"
	"log/slog"
	"slices"
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

// Every group of commands ("secrets", "service", "devices") answers -h,
// --help and "help GROUP" on stdout with exit 0, listing each of its
// commands with its summary. Before, "secrets -h" and "help service" were
// unknown commands.
func TestEveryGroupHasHelp(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		group, _, two := strings.Cut(c.name, " ")
		if !two || seen[group] {
			continue
		}
		seen[group] = true
		if named(group) == nil && groups[group].help == "" {
			t.Errorf("the group %q has no entry in groups", group)
		}
		for _, args := range [][]string{{group, "-h"}, {group, "--help"}, {"help", group}} {
			code, out, errOut := runForTest(args...)
			if code != exitOK {
				t.Errorf("%v: exit %d: %s", args, code, errOut)
			}
			for _, sub := range startingWith(group) {
				if !strings.Contains(out, "gatehouse "+sub+" ") || !strings.Contains(out, named(sub).summary) {
					t.Errorf("%v does not list %q with its summary:\n%s", args, sub, out)
				}
			}
		}
	}
	if len(seen) < 3 {
		t.Errorf("found %d groups, want secrets, service, devices and relay at least", len(seen))
	}
}

// A usage error exits 2, as git's and gh's do: an unknown command or
// flag, a flag's value of the wrong kind, a group without its command.
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"stauts"},
		{"help", "stauts"},
		{"devices", "alow"},
		{"secrets"},
		{"secrets", "chek"},
		{"serve", "--lsten", "x"},
		{"serve", "--port", "abc"},
		{"serve", "--listen"},
		{"status", "--frobnicate"},
		{"status", "--verbose=loud"},
		{"--frobnicate", "status"},
		{"completion", "tcsh"},
		{"version", "extra"},
	} {
		if code, _, errOut := runForTest(args...); code != exitUsage || errOut == "" {
			t.Errorf("%q: exit %d, want %d with a sentence on stderr: %q", args, code, exitUsage, errOut)
		}
	}
}

// suggest applies cobra's rule (two edits, or a prefix, ignoring case) to
// the words cobra does not know.
func TestSuggest(t *testing.T) {
	choices := []string{"listen", "port", "tls-cert", "tls-key", "no-tui", "relay"}
	for _, c := range []struct {
		word string
		want []string
	}{
		{"lsten", []string{"listen"}},
		{"LISTN", []string{"listen"}},
		{"tls", []string{"tls-cert", "tls-key"}},
		{"prot", []string{"port"}},
		{"listen", nil}, // the word itself is no suggestion
		{"frobnicate", nil},
		{"", nil},
	} {
		if got := suggest(c.word, choices); !slices.Equal(got, c.want) {
			t.Errorf("suggest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

// A one-shot command run in-process puts slog's default logger back as it
// found it, and the log package's output with it: slog.SetDefault points
// the log package at the new handler, which setting the old logger back
// does not undo.
func TestOneShotCommandRestoresTheDefaultLogger(t *testing.T) {
	before, out := slog.Default(), log.Writer()
	runForTest("-v", "version")
	if slog.Default() != before || log.Writer() != out {
		t.Errorf("version left slog's default logger or the log package's output changed")
	}
}

// A server's log keeps its own default level without a global flag; -v
// lowers it to Info and --debug to Debug.
func TestServerLoggerLevels(t *testing.T) {
	for _, c := range []struct {
		v    verbosity
		want slog.Level
	}{{quiet, slog.LevelWarn}, {verbose, slog.LevelInfo}, {debugging, slog.LevelDebug}} {
		e := &env{stderr: io.Discard, verbosity: c.v}
		l := e.serverLogger(slog.LevelWarn)
		if !l.Enabled(context.Background(), c.want) || c.want > slog.LevelDebug && l.Enabled(context.Background(), c.want-4) {
			t.Errorf("verbosity %d: the log does not start at %v", c.v, c.want)
		}
	}
}
