package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/relay/link"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/rpc/methods"
)

func init() {
	register(&command{
		name:    "call",
		summary: "call a method on another computer, as a device",
		usage:   "(--lan LINK | --relay URL --host ID) METHOD [JSON]",
		help: `Calls one method on another computer as a device, sealed end to end, and
prints the result as JSON; a refusal prints its code and the host's sentence and
exits 1.

--lan LINK calls a computer running 'gatehouse serve' on a LAN or Tailscale
address: the first call pairs through the link (the person at that computer
allows it, and chooses the grant), and the pairing is kept in this state folder
(lan-pairings.json, 0600) for the next calls until that serve stops.
--relay URL --host ID calls a device of this computer's relay account running
'gatehouse serve --relay'.

A change that may only run once (git.commit, git.push, git.fetch, git.pull,
worktree.create, worktree.merge, worktree.remove) goes with a sendId: if the
reply is lost, it is sent once more under the same id and the host answers
from memory; if that is lost too, gatehouse says so rather than risk doing it
twice. Example:

    gatehouse call --relay https://relay.example --host d-abc git.status '{"target":"..."}'`,
		setup: setupCall,
	})
}

func setupCall(fs *flag.FlagSet) func(*env, []string) int {
	relayURL := fs.String("relay", "", "the relay (default: the one this computer signed in to)")
	host := fs.String("host", "", "the id of the computer to call through the relay ('gatehouse devices' lists them)")
	lanLink := fs.String("lan", "", "the pairing link of a computer serving on a LAN or Tailscale address")
	return func(e *env, args []string) int {
		c := named("call")
		if (*host == "") == (*lanLink == "") || len(args) < 1 || len(args) > 2 {
			return usageError(e, c, "name the computer with --lan LINK or --host ID, then a method, and optionally its JSON parameters")
		}
		var params map[string]any
		if len(args) == 2 {
			if err := json.Unmarshal([]byte(args[1]), &params); err != nil || params == nil {
				return usageError(e, c, "the parameters are not a JSON object")
			}
		}
		reg := rpc.NewRegistry()
		if err := methods.Register(reg); err != nil {
			fmt.Fprintf(e.stderr, "gatehouse call: %v\n", err)
			return exitUsage
		}
		wait, once := 30*time.Second, false
		if m, ok := reg.Lookup(args[0]); ok {
			once = m.Once
			if m.Wait > 0 {
				wait = m.Wait
			}
		}
		if *lanLink != "" {
			return callLAN(e, *lanLink, args[0], params, wait, once)
		}
		id, _, code := identity(e)
		if id == nil {
			return code
		}
		if *relayURL != "" {
			u, err := relay.CheckURL(*relayURL)
			if err != nil {
				return usageError(e, c, "%s", trimRelay(err))
			}
			if id.Profile().URL != u.String() {
				fmt.Fprintf(e.stderr, "gatehouse call: this computer is not signed in to %s; run 'gatehouse login --relay %s' first\n", *relayURL, *relayURL)
				return exitUsage
			}
		}
		ctx := context.Background()
		dev, err := link.Dial(ctx, id, *host, nil)
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse call: %s\n", personal(err))
			return exitFound
		}
		defer dev.Close()
		var out []byte
		if once {
			out, err = dev.CallOnce(ctx, args[0], params, wait)
		} else {
			var p any
			if params != nil {
				p = params
			}
			out, err = dev.Call(ctx, args[0], p, wait)
		}
		return printCall(e, out, err)
	}
}

// printCall prints a call's result, or its refusal and exit 1.
func printCall(e *env, out []byte, err error) int {
	if err != nil {
		var re *rpc.RemoteError
		if errors.As(err, &re) {
			fmt.Fprintf(e.stderr, "%s: %s\n", re.Code, re.Sentence())
		} else {
			fmt.Fprintf(e.stderr, "%s\n", personal(err))
		}
		return exitFound
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, out, "", "  ") != nil {
		pretty.Write(out)
	}
	fmt.Fprintln(e.stdout, pretty.String())
	return exitOK
}

const lanPairingsFile = "lan-pairings.json"

// callLAN pairs through the link when this state folder has no pairing
// with that computer (or it was forgotten there), then calls.
func callLAN(e *env, rawLink, method string, params map[string]any, wait time.Duration, once bool) int {
	l, err := lan.ParseLink(rawLink)
	if err != nil {
		return usageError(e, named("call"), "%v", err)
	}
	store, code := openState(e)
	if store == nil {
		return code
	}
	file := filepath.Join(store.Dir(), lanPairingsFile)
	pairings := map[string]lan.Paired{}
	if data, err := atomicfile.ReadBounded(file, 1<<20); err == nil {
		_ = json.Unmarshal(data, &pairings)
	}
	hc := &http.Client{Timeout: 2 * time.Minute}
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		p, known := pairings[l.Base]
		if !known {
			name, _ := os.Hostname()
			fmt.Fprintf(e.stderr, "Asking %s to pair; allow it there.\n", l.Base)
			if p, err = lan.Pair(ctx, hc, l, "gatehouse call on "+name); err != nil {
				fmt.Fprintf(e.stderr, "gatehouse call: %s\n", personal(err))
				return exitFound
			}
			pairings[l.Base] = p
			if err := saveJSON(file, pairings); err != nil {
				fmt.Fprintf(e.stderr, "gatehouse call: %v\n", err)
			}
		}
		conn := lan.NewConn(hc, p)
		var out []byte
		if once {
			out, err = conn.CallOnce(ctx, method, params, wait)
		} else {
			cctx, cancel := context.WithTimeout(ctx, wait)
			var pp any
			if params != nil {
				pp = params
			}
			out, err = conn.Call(cctx, method, pp)
			cancel()
		}
		if conn.NotPaired() && known && attempt == 0 {
			delete(pairings, l.Base) // that serve forgot this device: pair again
			_ = saveJSON(file, pairings)
			continue
		}
		return printCall(e, out, err)
	}
}

func saveJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}

// personal is an error as a person reads it: a sentence when there is one.
func personal(err error) string {
	var se interface{ Sentence() string }
	if errors.As(err, &se) {
		return se.Sentence()
	}
	if s := refusal.Sentence(err); s != refusal.InternalSentence {
		return s
	}
	return trimRelay(err)
}
