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

--as phone is a device with the switch off (the closed gate), phone-full one
with it on, desktop the person at the computer. --grant defaults to full, so
--as phone is the most a device can do while the switch is off.

--project serves a folder (repeat for several; the current folder when none is
given); 'projects.list' gives their ids. With one project, "target" may be left
out of JSON. JSON too long for the command line (a files.write of a large file)
comes on standard input with "-", or from a file with "@FILE" (at most 8 MiB).
Examples:

    gatehouse do --as phone --grant view git.diff '{"path":"README.md"}'
    gatehouse do --as phone-full files.write - < write.json`,
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
	grant := fs.String("grant", "full", "the device's grant: view, control or full")
	var projects multiFlag
	fs.Var(&projects, "project", "a folder to serve (repeatable; default: the current folder)")
	return func(e *env, args []string) int {
		c := named("do")
		g, err := trust.ParseGrant(*grant)
		if err != nil {
			return usageError(e, c, "%v", err)
		}
		if *as != "desktop" && *as != "phone" && *as != "phone-full" {
			return usageError(e, c, "--as takes desktop, phone or phone-full")
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
		params := json.RawMessage("{}")
		if len(args) == 2 {
			if params, err = readParams(e, args[1]); err != nil {
				return usageError(e, c, "%v", err)
			}
		}
		params, err = defaultTarget(params, host, args[0], len(projects))
		if err != nil {
			return usageError(e, c, "the parameters are not a JSON object")
		}
		dev := rpc.Device{ID: "gatehouse-do", Fingerprint: strings.Repeat("0", 32), Desktop: *as == "desktop"}
		req := rpc.Request{Type: "req", ID: "do", Method: args[0], Params: params, TS: time.Now().UnixMilli(), Nonce: "gatehouse-do-nonce"}
		res := host.Handle(context.Background(), dev, req)
		if !res.OK {
			fmt.Fprintf(e.stderr, "%s: %s\n", res.Code, res.Error)
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
	targets := rpc.NewTargets(fsguard.Options{Home: home, StateDir: state}, gate.Options{})
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

// defaultTarget fills in "target" when exactly one project is served.
func defaultTarget(params json.RawMessage, host *rpc.Host, method string, n int) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(params, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not an object")
	}
	meth, known := host.Registry().Lookup(method)
	if _, ok := m["target"]; !ok && n == 1 && known && meth.TakesTarget() {
		if all := host.Targets().All(); len(all) == 1 {
			m["target"] = all[0].ID
			return json.Marshal(m)
		}
	}
	return params, nil
}
