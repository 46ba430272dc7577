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
		help: `Prints gatehouse's version, the commit it was built from (when the build
recorded one) and the Go version. 'gatehouse --version' and 'gatehouse -v'
alone print the same.

With --json it prints one JSON object instead, for scripts; its fields are
kept from one version to the next:
  version  the release ("v1.2.3"), or "dev" for a build from source
  commit   the first 12 hex digits of the commit, "+dirty" after them for a
           build from a changed checkout, or "unknown"
  go       the Go version it was built with ("go1.26.0")
  os, arch the system it was built for (GOOS and GOARCH: "linux", "amd64")`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			asJSON := fs.Bool("json", false, "print one JSON object (its fields are listed above) instead of text")
			return func(e *env, args []string) int {
				if len(args) > 0 {
					return usageError(e, named("version"), "takes no arguments")
				}
				if *asJSON {
					v := versionJSON{Version: version, Commit: commit(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
					if err := writeJSON(e.stdout, v); err != nil {
						fmt.Fprintf(e.stderr, "gatehouse version: %v\n", err)
						return exitUsage
					}
					return exitOK
				}
				fmt.Fprintf(e.stdout, "gatehouse %s (commit %s, %s %s/%s)\n", version, commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return exitOK
			}
		},
	})
}

// versionJSON is what version --json prints.
type versionJSON struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
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
