package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/gatehouse/gatehouse/regress"
)

func init() {
	register(&command{
		name:    "regress",
		summary: "run the exploit corpus against the real git",
		usage:   "[--git PATH] [--run REGEX] [--format text|json] [--keep]",
		help: `Runs gatehouse's exploit corpus against a real git (the one on PATH, or --git).
Each case builds a repository that, without gatehouse, makes git run a program
(the payload only creates a marker file in the case's own folder), leak a
secret, or write outside the checkout. It first reproduces the exploit with
plain git or the desktop trust, then runs the same method through the real
host dispatch as a phone with the switch off, and checks that the exploit never
fires and the answer is the expected refusal or a safe success.

A case whose exploit does not fire on a git it applies to fails as
not-reproduced; cases for other git versions are skipped. One line per case,
then "N passed, N failed, N skipped"; exit 1 on any failure. Run it on every
git upgrade, and in CI. Nothing touches the network: remotes are local paths
or servers on loopback.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			git := fs.String("git", "", "the git binary to attack (default: git on PATH)")
			run := fs.String("run", "", "only cases whose name matches this regular expression")
			format := formatFlag(fs, "text", "json")
			keep := fs.Bool("keep", false, "keep each case's repositories and print where")
			return func(e *env, args []string) int {
				c := named("regress")
				if len(args) > 0 {
					return usageError(e, c, "takes no arguments")
				}
				if !checkFormat(e, c, *format, "text", "json") {
					return exitUsage
				}
				o := regress.Options{Git: *git, Keep: *keep}
				if *run != "" {
					re, err := regexp.Compile(*run)
					if err != nil {
						return usageError(e, c, "--run: %v", err)
					}
					o.Run = re
				}
				progress := *format == "text" && isTerminal(e.stderr)
				if progress {
					o.Progress = func(i, n int, name string) {
						fmt.Fprintf(e.stderr, "\r\033[K[%d/%d] %s", i+1, n, name)
					}
				}
				results, err := regress.Run(context.Background(), regress.Corpus(), o)
				if progress {
					fmt.Fprint(e.stderr, "\r\033[K")
				}
				if err != nil {
					fmt.Fprintf(e.stderr, "gatehouse regress: %v\n", err)
					return exitUsage
				}
				if len(results) == 0 {
					// A mistyped --run must not pass as a clean run.
					return usageError(e, c, "no case matches --run %q", *run)
				}
				return report(e, *format, results, *keep)
			}
		},
	})
}

func report(e *env, format string, results []regress.Result, keep bool) int {
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Status]++
	}
	if format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"results": results, "passed": counts["pass"], "failed": counts["FAIL"], "skipped": counts["skip"]})
	} else {
		for _, r := range results {
			line := fmt.Sprintf("%-4s  %-44s git %s  %s", r.Status, r.Name, r.Git, time.Duration(r.MS)*time.Millisecond)
			if r.Reason != "" {
				line += "  " + r.Reason
			}
			fmt.Fprintln(e.stdout, line)
		}
		if keep && len(results) > 0 {
			fmt.Fprintf(e.stdout, "repositories kept in %s\n", filepath.Dir(results[0].Dir))
		}
		fmt.Fprintf(e.stdout, "%d passed, %d failed, %d skipped\n", counts["pass"], counts["FAIL"], counts["skip"])
	}
	if counts["FAIL"] > 0 {
		return exitFound
	}
	return exitOK
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
}
