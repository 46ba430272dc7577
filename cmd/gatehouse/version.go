package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at release time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func init() {
	register(&command{
		name:    "version",
		summary: "print the version, commit and Go version",
		usage:   "",
		help:    "Prints gatehouse's version, the commit it was built from (when the build recorded one) and the Go version.",
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			return func(e *env, args []string) int {
				fmt.Fprintf(e.stdout, "gatehouse %s (commit %s, %s %s/%s)\n", version, commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return exitOK
			}
		},
	})
}

// commit is the VCS revision the build recorded, or "unknown".
func commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
