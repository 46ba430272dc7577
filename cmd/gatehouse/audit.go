package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/gatehouse/gatehouse/audit"
)

func init() {
	register(&command{
		name:    "audit",
		summary: "report what in a repository the gate would refuse",
		usage:   "[--format text|json|sarif] [--fail-on error|warning|never] [--config FILE] [--baseline FILE] [--write-baseline FILE] [PATH]",
		help: `Audits a checkout (default: the current folder), a bare repository, or a plain
folder, and reports, each with a rule id, a level, the sentence the gate would say
and a location:

  git config   every local and worktree entry the Change gate or the Read gate
               would refuse (programs, the network, includes, unknown keys),
               submodules, a partial clone, core.worktree, a redirected .git
  secrets      tracked files (index and HEAD) the secret rules match
  tree         hard links, FIFOs, sockets and devices, symlinks that leave the
               tree or point at a secret or into .git, names that are .git in
               another spelling, control characters, a leading dash
  attributes   every filter, diff or merge driver attributes select, and where it is defined

A secret-named file whose content git holds is judged by its first 64 KiB
where the name alone is ambiguous (a .pem, a .key, a service-account JSON): a
certificate or a public key is a note, not an error.

It runs git with the closed gate's options, never a program the repository
names, so it is safe in CI on an untrusted pull request. Exits 1 when a finding
reaches --fail-on (default: error), 2 on a usage error.

.gatehouse.json at the top of the audited folder (or --config FILE) allows
findings by path glob and rule id, each with a reason:

    {"version": 1, "allow": [
      {"path": "testdata/**", "rule": "secret-tracked", "reason": "test keys, used nowhere"}]}

--baseline FILE accepts the findings listed there (path, rule, fingerprint and
reason each), so CI fails only on new ones; a baseline that does not exist yet
accepts nothing, with a note. --write-baseline FILE writes the current findings
as the baseline, keeping the reasons already written, and accepts them for this
run.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			format := formatFlag(fs, "text", "json", "sarif")
			failOn := fs.String("fail-on", "error", "exit 1 on findings at this level or above: error, warning or never")
			config := fs.String("config", "", "the allowlist file (default: "+audit.ConfigName+" in the audited folder, if there is one)")
			baseline := fs.String("baseline", "", "accept the findings in this baseline file (none yet: a note, nothing accepted)")
			writeBaseline := fs.String("write-baseline", "", "write the current findings to this baseline file")
			return func(e *env, args []string) int {
				c := named("audit")
				if !checkFormat(e, c, *format, "text", "json", "sarif") {
					return exitUsage
				}
				if *failOn != "error" && *failOn != "warning" && *failOn != "never" {
					return usageError(e, c, "--fail-on takes error, warning or never")
				}
				if len(args) > 1 {
					return usageError(e, c, "audit one folder at a time")
				}
				dir := "."
				if len(args) == 1 {
					dir = args[0]
				}
				rep, err := audit.Run(context.Background(), dir, audit.Options{})
				if err != nil {
					fmt.Fprintf(e.stderr, "gatehouse audit: %v\n", err)
					return exitUsage
				}
				if code := applyConfig(e, rep, dir, *config); code != exitOK {
					return code
				}
				if *writeBaseline != "" { // then it is the baseline: everything found is accepted
					if err := audit.WriteBaseline(*writeBaseline, rep); err != nil {
						fmt.Fprintf(e.stderr, "gatehouse audit: %v\n", err)
						return exitUsage
					}
					fmt.Fprintf(e.stderr, "gatehouse audit: wrote %d findings to %s; pass it with --baseline to accept them\n", len(rep.Findings), *writeBaseline)
					*baseline = *writeBaseline
				}
				if *baseline != "" {
					err := audit.ApplyBaseline(*baseline, rep)
					switch {
					case errors.Is(err, audit.ErrNoBaseline):
						fmt.Fprintf(e.stderr, "gatehouse audit: note: --baseline %s does not exist yet, so no finding is accepted; write one with --write-baseline %s\n", *baseline, *baseline)
					case err != nil:
						fmt.Fprintf(e.stderr, "gatehouse audit: --baseline %s: %v\n", *baseline, err)
						return exitUsage
					}
				}
				switch *format {
				case "json":
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					_ = enc.Encode(rep)
				case "sarif":
					out, err := audit.SARIF(rep, version)
					if err != nil {
						fmt.Fprintf(e.stderr, "gatehouse audit: %v\n", err)
						return exitUsage
					}
					fmt.Fprintln(e.stdout, string(out))
				default:
					printAudit(e.stdout, rep)
				}
				if *failOn != "never" && rep.Fails(audit.Level(*failOn)) {
					return exitFound
				}
				return exitOK
			}
		},
	})
}

// applyConfig applies the allowlist: the one named, or the audited
// folder's own when it has one. A broken config is a usage error: quietly
// ignoring it would quietly fail findings a team meant to accept, or accept
// nothing it meant to.
func applyConfig(e *env, rep *audit.Report, dir, file string) int {
	explicit := file != ""
	if !explicit {
		file = filepath.Join(dir, audit.ConfigName)
	}
	cfg, err := audit.LoadConfig(file)
	switch {
	case err == nil:
		cfg.Apply(rep)
	case errors.Is(err, fs.ErrNotExist) && !explicit:
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(e.stderr, "gatehouse audit: --config %s: no such file\n", file)
		return exitUsage
	default:
		fmt.Fprintf(e.stderr, "gatehouse audit: %s: %v\n", file, err)
		return exitUsage
	}
	return exitOK
}

func printAudit(w io.Writer, rep *audit.Report) {
	fmt.Fprintf(w, "Audited a %s: %s\n", auditedNoun(rep.Audited), rep.Name)
	counts := map[audit.Level]int{}
	group := ""
	for _, r := range audit.Rules { // grouped, in the rules' order
		for _, f := range rep.Findings {
			if f.Rule != r.ID {
				continue
			}
			if r.Group != group {
				group = r.Group
				fmt.Fprintf(w, "\n%s\n", group)
			}
			loc := f.Path
			if f.Line > 0 {
				loc += fmt.Sprintf(":%d", f.Line)
			}
			fmt.Fprintf(w, "  %-7s %-22s %s  %s\n", f.Level, f.Rule, loc, f.Message)
			counts[f.Level]++
		}
	}
	fmt.Fprintf(w, "\n%s, %s, %s", count(counts[audit.Error], "error"), count(counts[audit.Warning], "warning"), count(counts[audit.Note], "note"))
	if len(rep.Allowed) > 0 {
		fmt.Fprintf(w, " (%d allowed by the config)", len(rep.Allowed))
	}
	if rep.Baselined > 0 {
		fmt.Fprintf(w, " (%d more accepted by the baseline)", rep.Baselined)
	}
	if rep.Truncated {
		fmt.Fprint(w, " (the scan stopped at its bounds)")
	}
	fmt.Fprintln(w)
}
