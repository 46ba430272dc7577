package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version overrides the version the build recorded, for a packager that
// builds outside a tagged module: -ldflags "-X main.version=v1.2.3". Left
// empty, the version comes from the build info (see buildVersion).
var version = ""

func init() {
	register(&command{
		name:    "version",
		summary: "print the version, commit and Go version",
		usage:   "",
		help: `Prints gatehouse's version, the commit it was built from (when the build
recorded one) and the Go version. 'gatehouse --version' and 'gatehouse -v'
alone print the same.

The version is the release tag the module was installed at ('go install
github.com/gatehouse/gatehouse/cmd/gatehouse@v0.3.0' prints v0.3.0); a
build inside a git checkout gets the one Go derives from the checkout's
tags (v0.3.0 on a tagged commit, a v0.3.1-0.<time>-<commit> pseudo-version
after it); a build with neither prints "devel".

With --json it prints one JSON object instead, for scripts; its fields are
kept from one version to the next:
  version  the release ("v1.2.3"), a pseudo-version, or "devel"
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
				info, _ := debug.ReadBuildInfo()
				ver, rev := buildVersion(version, info), buildCommit(info)
				if *asJSON {
					v := versionJSON{Version: ver, Commit: rev, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
					if err := writeJSON(e.stdout, v); err != nil {
						fmt.Fprintf(e.stderr, "gatehouse version: %v\n", err)
						return exitUsage
					}
					return exitOK
				}
				fmt.Fprintf(e.stdout, "gatehouse %s (commit %s, %s %s/%s)\n", ver, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
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

// develVersion is printed when neither the linker nor the build info gave a
// version.
const develVersion = "devel"

// buildVersion picks the version to print: the linker's -X value when a
// packager set one, else the main module's version from the build info. The
// go command records there the tag 'go install ...@v0.3.0' fetched, and
// since Go 1.24 'go build' in a git checkout records a version derived from
// the checkout's tags (a pseudo-version between tags, "+dirty" for changed
// files); it writes "(devel)" when it had neither, which prints as "devel".
func buildVersion(ldflags string, info *debug.BuildInfo) string {
	if ldflags != "" {
		return ldflags
	}
	if info == nil {
		return develVersion
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		return develVersion
	}
	return v
}

// buildCommit is the VCS revision the build recorded, shortened to 12 hex
// digits with "+dirty" for a changed checkout, or "unknown".
func buildCommit(info *debug.BuildInfo) string {
	if info == nil {
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
	rev = rev[:min(len(rev), 12)]
	if dirty {
		rev += "+dirty"
	}
	return rev
}
