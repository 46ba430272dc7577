package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "do",
		summary: "run one method in-process exactly as the host would",
		usage:   "[--as desktop|phone|phone-full] [--grant view|control|full] [--project DIR]... METHOD [JSON | - | @FILE]",
		help: `Runs one method of the request protocol through the same dispatch and checks
as a device's request, with no network: for scripts, for finding out why the
host refused something, and for security tests. Prints the reply's result as
JSON, or the error code and sentence on standard error and exits 1.

Without --as the caller is a phone with the switch off (the closed gate);
phone-full is one with the switch on; desktop is the person at the computer
(no grant applies, and --grant is refused). A phone's grant is view, the
least, unless --grant names another: so a plain 'gatehouse do' may look at a
checkout but change nothing in it, and 'do --as phone git.stage' is refused
until you say --grant control.

--project serves a folder (repeat for several; the current folder when none is
given). "target" names a project by its id or by its folder's name, as the
page and 'projects.list' show them; with one project it may be left out. A
target left out with several served, or naming none of them, is refused with
the list of choices. JSON too long for the command line (a files.write of a
large file) comes on standard input with "-", or from a file with "@FILE" (at
most 8 MiB). Examples:

    gatehouse do git.diff '{"path":"README.md"}'
    gatehouse do --as phone --grant control git.stage '{"paths":["README.md"]}'
    gatehouse do --as phone-full --grant full files.write - < write.json`,
		setup: setupDo,
	})
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// fixedGrant gives one synthetic device one grant.
type fixedGrant trust.Grant

func (g fixedGrant) GrantFor(string, string) trust.Grant { return trust.Grant(g) }

func setupDo(fs *flag.FlagSet) func(*env, []string) int {
	as := fs.String("as", "phone", "who is calling: desktop, phone (switch off) or phone-full (switch on)")
	grant := fs.String("grant", "", "a phone's grant: view, control or full (default view, the least)")
	var projects multiFlag
	fs.Var(&projects, "project", "a folder to serve (repeatable; default: the current folder)")
	return func(e *env, args []string) int {
		c := named("do")
		if *as != "desktop" && *as != "phone" && *as != "phone-full" {
			return usageError(e, c, "--as takes desktop, phone or phone-full")
		}
		g, err := doGrant(*as, *grant)
		if err != nil {
			return usageError(e, c, "%v", err)
		}
		if len(args) < 1 || len(args) > 2 {
			return usageError(e, c, "name a method, and optionally its JSON parameters")
		}
		if len(projects) == 0 {
			projects = multiFlag{"."}
		}
		host, cleanup, err := newDoHost(projects, g, *as == "phone-full")
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse do: %v\n", err)
			return exitUsage
		}
		defer cleanup()
		if unknownMethod(e, host.Registry(), "do", args[0]) {
			return exitUsage
		}
		params := json.RawMessage("{}")
		if len(args) == 2 {
			if params, err = readParams(e, args[1]); err != nil {
				return usageError(e, c, "%v", err)
			}
		}
		if params, err = doTarget(params, host, args[0]); err != nil {
			return usageError(e, c, "%v", err)
		}
		dev := rpc.Device{ID: "gatehouse-do", Fingerprint: strings.Repeat("0", 32), Desktop: *as == "desktop"}
		req := rpc.Request{Type: "req", ID: "do", Method: args[0], Params: params, TS: time.Now().UnixMilli(), Nonce: "gatehouse-do-nonce"}
		res := host.Handle(context.Background(), dev, req)
		if !res.OK {
			fmt.Fprintf(e.stderr, "%s: %s\n", res.Code, res.Error)
			if res.Code == "ACCESS" && *grant == "" {
				fmt.Fprintf(e.stderr, "(gatehouse do: --as %s has the view grant unless --grant names another)\n", *as)
			}
			return exitFound
		}
		var out bytes.Buffer
		if err := json.Indent(&out, res.Result, "", "  "); err != nil {
			out.Write(res.Result)
		}
		fmt.Fprintln(e.stdout, out.String())
		return exitOK
	}
}

// newDoHost builds a host serving projects, with one synthetic device.
func newDoHost(projects []string, g trust.Grant, switchOn bool) (*rpc.Host, func(), error) {
	reg := rpc.NewRegistry()
	if err := methods.Register(reg); err != nil {
		return nil, nil, err
	}
	home, _ := os.UserHomeDir()
	state, _ := trust.DefaultDir()
	config, _ := trust.DefaultConfigDir()
	targets := rpc.NewTargets(fsguard.Options{Home: home, StateDir: state, ConfigDir: config}, doGateOptions(state, config))
	for _, p := range projects {
		if _, err := targets.Add(p, trust.Served, ""); err != nil {
			targets.Close()
			return nil, nil, err
		}
	}
	host := rpc.NewHost(rpc.HostOptions{Registry: reg, Targets: targets, Grants: fixedGrant(g),
		FullAccess: func() bool { return switchOn }, Version: version})
	return host, func() { host.Close(); targets.Close() }, nil
}

// doGrant is the grant of the caller --as names: a phone's --grant, or
// view, the least, when it names none. The desktop has no grant: one named
// for it is refused rather than ignored.
func doGrant(as, grant string) (trust.Grant, error) {
	switch {
	case as == "desktop" && grant != "":
		return trust.None, fmt.Errorf("--grant is a phone's; the desktop is the person at the computer and has none")
	case grant == "":
		return trust.View, nil
	}
	g, err := trust.ParseGrant(grant) // none too: a device with no grant, for tests
	if err != nil {
		return trust.None, fmt.Errorf("--grant takes view, control or full, not %q", grant)
	}
	return g, nil
}

// doTarget resolves "target" in params among the projects host serves, as
// pickTarget does for 'gatehouse call'.
func doTarget(params json.RawMessage, host *rpc.Host, method string) (json.RawMessage, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("the parameters are not a JSON object")
	}
	meth, known := host.Registry().Lookup(method)
	if !known || !meth.TakesTarget() {
		return params, nil
	}
	var served []project
	for _, t := range host.Targets().All() {
		served = append(served, project{ID: t.ID, Name: t.Name})
	}
	filled, err := pickTarget(m, served)
	if err != nil {
		return nil, err
	}
	return json.Marshal(filled)
}

// doGateOptions are the memory bounds serve would use, from the settings
// file (serve's hostOptions): do ran every closed git with the default
// 1 GiB whatever gitMemoryLimitMiB said, so it did not run a method as the
// host would. Folders that do not exist yet are not made for it (the
// defaults hold), and folders another user could replace are not read.
// The state folder keeps the kernel wall's self-test answer (WallProofs):
// a do is one closed call, and proving the kernel again at each was most
// of its cost over git's own.
func doGateOptions(state, config string) gate.Options {
	for _, dir := range []string{state, config} {
		if _, err := os.Stat(dir); err != nil {
			return gate.Options{}
		}
	}
	store, err := trust.OpenStoreWithConfig(state, config)
	if err != nil || store.Guard() != nil {
		return gate.Options{}
	}
	set := store.Settings()
	return gate.Options{MemoryLimitMiB: set.GitMemoryLimitMiB, Budget: gate.NewMemoryBudget(set.GitMemoryTotalMiB, set.GitMemoryLimitMiB),
		WallProofs: store}
}
