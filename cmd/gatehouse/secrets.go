package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gatehouse/gatehouse/secretfiles"
)

func init() {
	register(&command{
		name:    "secrets check",
		summary: "check paths against the secret-file rules",
		usage:   "[--format text|json] [-z] [PATH... | -]",
		help: `'gatehouse secrets check' prints each path that the secret-file rules match,
with the rule and why it is there, and exits 1 if any matched (0 if none, 2 on
a usage error). Paths come from the arguments, or from standard input with
"-" (one per line, or NUL-separated with -z). A symlink counts as the secret
it resolves to. Letter case is ignored.

A pre-commit hook (.git/hooks/pre-commit) that refuses to commit a secret file:

    #!/bin/sh
    git diff --cached --name-only --diff-filter=d -z | gatehouse secrets check -z -

--diff-filter=d leaves deletions out, so a commit that deletes a secret goes
through; a file added, changed or renamed is checked by its new name (renaming
a secret to an innocent name passes: the hook reads names, not content).

These are the same rules that hide secret files from a phone below the full
grant and that 'gatehouse audit' reports. They come from the public record:
the file rules of secret scanners (gitrob, shhgit, talisman, gitleaks), GitHub's
gitignore templates, and vendors' documentation of where their tools keep
credentials; each rule carries its reason and its source (secretfiles/rules.go,
docs/secret-rules.md). They cover private keys and key stores, cloud,
package-manager and developer CLIs in their Linux, macOS and Windows folders
(.config/..., Library/Application Support/..., AppData/Roaming/...), web
frameworks' secret configs, database clients, shell and REPL histories and
startup files, mail, chat, FTP and remote-desktop clients, system credential
stores, password managers and wallets. A rule matches at any depth: a home
folder copied into a backup is still a home folder.

Not secret: committed templates (.env.example, *.sample.*), certificates and
public keys (.crt, .pub, CA bundles), documentation, schemas, source files
and scripts that handle secrets (secrets.go, load-secrets.sh), and CI
definitions (.github/workflows/, .gitlab-ci.yml, .circleci/config.yml,
Jenkinsfile, azure-pipelines.yml, .travis.yml). Names only: a secret in a file
with an innocent name is not found.`,
		setup: setupSecrets,
	})
}

// secretMatch is one path the rules matched.
type secretMatch struct {
	Path    string `json:"path"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	Through string `json:"through,omitempty"` // the symlink's target, when that is what matched
}

func setupSecrets(fs *flag.FlagSet) func(*env, []string) int {
	format := formatFlag(fs, "text", "json")
	nul := fs.Bool("z", false, "paths on standard input are separated by NUL bytes, not newlines")
	return func(e *env, paths []string) int {
		c := named("secrets check")
		if !checkFormat(e, c, *format, "text", "json") {
			return exitUsage
		}
		if len(paths) == 1 && paths[0] == "-" {
			var err error
			if paths, err = readPaths(e.stdin, *nul); err != nil {
				fmt.Fprintf(e.stderr, "gatehouse secrets check: reading standard input: %v\n", err)
				return exitUsage
			}
		} else if len(paths) == 0 {
			return usageError(e, c, "name the paths to check, or - to read them from standard input")
		}
		found := checkSecrets(cwdScope(), paths)
		if err := printSecrets(e.stdout, *format, found, len(paths)); err != nil {
			fmt.Fprintf(e.stderr, "gatehouse secrets check: %v\n", err)
			return exitUsage
		}
		if len(found) > 0 {
			return exitFound
		}
		return exitOK
	}
}

// maxStdinPaths bounds the paths read from standard input.
const maxStdinPaths = 10_000_000

func readPaths(r io.Reader, nul bool) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if nul {
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
			if i := bytes.IndexByte(data, 0); i >= 0 {
				return i + 1, data[:i], nil
			}
			if atEOF && len(data) > 0 {
				return len(data), data, nil
			}
			return 0, nil, nil
		})
	}
	var out []string
	for sc.Scan() {
		if p := sc.Text(); p != "" {
			if len(out) >= maxStdinPaths {
				return nil, fmt.Errorf("more than %d paths", maxStdinPaths)
			}
			out = append(out, p)
		}
	}
	return out, sc.Err()
}

// cwdScope places relative paths in the current folder, so they are also
// matched as seen from home.
func cwdScope() secretfiles.Scope {
	cwd, _ := os.Getwd()
	if c, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = c
	}
	home, _ := os.UserHomeDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	return secretfiles.Default().For(cwd, home)
}

// checkSecrets matches each path by name and, for a symlink, by what it
// resolves to.
func checkSecrets(scope secretfiles.Scope, paths []string) []secretMatch {
	var found []secretMatch
	for _, p := range paths {
		if r, ok := matchPath(scope, p); ok {
			found = append(found, secretMatch{Path: p, Rule: r.Pattern, Reason: r.Reason})
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if target, err := filepath.EvalSymlinks(p); err == nil {
				if abs, err := filepath.Abs(target); err == nil {
					target = abs
				}
				if r, ok := scope.MatchAbs(target); ok {
					found = append(found, secretMatch{Path: p, Rule: r.Pattern, Reason: r.Reason, Through: target})
				}
			}
		}
	}
	return found
}

func matchPath(scope secretfiles.Scope, p string) (secretfiles.Rule, bool) {
	if filepath.IsAbs(p) {
		return scope.MatchAbs(filepath.Clean(p))
	}
	return scope.Match(filepath.ToSlash(filepath.Clean(p)))
}

func printSecrets(w io.Writer, format string, found []secretMatch, checked int) error {
	if format == "json" {
		if found == nil {
			found = []secretMatch{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Checked int           `json:"checked"`
			Secrets []secretMatch `json:"secrets"`
		}{checked, found})
	}
	for _, m := range found {
		through := ""
		if m.Through != "" {
			through = " (symlink to " + m.Through + ")"
		}
		if _, err := fmt.Fprintf(w, "%s%s: %s (%s)\n", m.Path, through, m.Rule, m.Reason); err != nil {
			return err
		}
	}
	return nil
}
