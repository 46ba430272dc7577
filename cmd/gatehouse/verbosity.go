package main

import (
	"errors"
	"flag"
	"io"
	"log"
	"log/slog"
	"strconv"
	"strings"
)

// verbosity is how much of gatehouse's own log a command shows on stderr.
// A one-shot command (do, regress, call, audit, secrets, status, devices,
// doctor, policy ...) shows none unless asked: what went wrong is already
// its sentence on stderr, and a "WARN request refused" line beside every
// refusal, 58 of them for a regress run, buried it. A server (serve,
// relay) logs by default: its log is what it is for.
type verbosity int

const (
	quiet     verbosity = iota
	verbose             // -v, --verbose: information and warnings
	debugging           // --debug: down to debug lines
)

// globalFlags are the flags every command takes, before its name
// ("gatehouse -v do ...") or among its own ("gatehouse do -v ...").
var globalFlags = []struct {
	name, usage string
	level       verbosity
}{
	{"verbose", "show the log on stderr: warnings and what was done (a one-shot command shows none without it)", verbose},
	{"v", "short for --verbose", verbose},
	{"debug", "show the log down to its debug lines", debugging},
}

// slogLevel is the lowest level shown: below the servers' default when
// asked for, and the one-shot commands' only level.
func (v verbosity) slogLevel(serverDefault slog.Level) slog.Level {
	switch v {
	case debugging:
		return slog.LevelDebug
	case verbose:
		return min(serverDefault, slog.LevelInfo)
	}
	return serverDefault
}

// set is the flag.Value of one global flag: a boolean that raises v.
type set struct {
	v     *verbosity
	level verbosity
}

func (s set) IsBoolFlag() bool { return true }
func (s set) String() string   { return "false" }
func (s set) Set(value string) error {
	on, err := strconv.ParseBool(value) // as the flag package's own booleans
	if err != nil {
		return errors.New("parse error") // flagError says "true or false"
	}
	if on {
		*s.v = max(*s.v, s.level)
	}
	return nil
}

// declare adds the global flags to a command's flag set, but not one the
// command declares itself (relay's own --debug).
func (v *verbosity) declare(fs *flag.FlagSet) {
	for _, g := range globalFlags {
		if fs.Lookup(g.name) == nil {
			fs.Var(set{v, g.level}, g.name, g.usage)
		}
	}
}

// parseLeading takes the global flags before the command's name off args.
// -h and --help there ask for the overview, as "help" does; another flag
// is an error.
func (v *verbosity) parseLeading(args []string) ([]string, *unknownFlag) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		name := strings.TrimLeft(args[0], "-")
		switch {
		case args[0] == "--":
			return args[1:], nil
		case name == "h" || name == "help":
			return append([]string{"help"}, args[1:]...), nil
		}
		g := globalFlag(name)
		if g < 0 {
			return nil, unknownFlagError(name, globalFlagNames())
		}
		*v = max(*v, globalFlags[g].level)
		args = args[1:]
	}
	return args, nil
}

func globalFlag(name string) int {
	for i, g := range globalFlags {
		if g.name == name {
			return i
		}
	}
	return -1
}

func globalFlagNames() []string {
	names := []string{"help", "version"}
	for _, g := range globalFlags {
		names = append(names, g.name)
	}
	return names
}

// longRunning are the commands whose log is their product: they keep
// logging to stderr without -v.
var longRunning = map[string]bool{
	"serve": true, // the host: its log says who asked for what
	"relay": true, // the relay server
}

// setDefaultLogger points slog's default logger, which the packages a
// one-shot command calls log through (rpc.NewHost and lan with no Logger,
// regress's hosts), at w when -v or --debug asked for it and nowhere
// otherwise. It leaves the servers' alone. The returned function puts the
// old default back, for tests that run commands in-process.
func (v verbosity) setDefaultLogger(w io.Writer, c *command) (restore func()) {
	if longRunning[c.name] {
		return func() {}
	}
	old, oldOut, oldFlags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(v.oneShotLogger(w))
	return func() {
		slog.SetDefault(old)
		// slog.SetDefault pointed the log package at the new handler;
		// putting a default handler back does not undo that.
		log.SetOutput(oldOut)
		log.SetFlags(oldFlags)
	}
}

// oneShotLogger is the log of a one-shot command: nothing unless -v or
// --debug asked for it.
func (v verbosity) oneShotLogger(w io.Writer) *slog.Logger {
	if v == quiet {
		return slog.New(slog.DiscardHandler)
	}
	return newLogger(w, v.slogLevel(slog.LevelInfo))
}

// serverLogger is the log of a long-running command: at its own default
// level (serve's Warn, relay's Info), lowered by -v to Info and by
// --debug to Debug. serve's and relay's setup can take their logger from
// here so that the global flags reach them.
func (e *env) serverLogger(serverDefault slog.Level) *slog.Logger {
	return newLogger(e.stderr, e.verbosity.slogLevel(serverDefault))
}

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
