package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/relay/link"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/methods"
)

func init() {
	register(&command{
		name:    "call",
		summary: "call a method on another computer, as a device",
		usage:   "--relay URL --host ID METHOD [JSON]",
		help: `Calls one method on the computer ID (a device of this computer's relay
account running 'gatehouse serve --relay'), sealed end to end, and prints the
result as JSON; a refusal prints its code and the host's sentence and exits 1.

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
	host := fs.String("host", "", "the id of the computer to call ('gatehouse devices' lists them)")
	return func(e *env, args []string) int {
		c := named("call")
		if *host == "" || len(args) < 1 || len(args) > 2 {
			return usageError(e, c, "name the host with --host ID, a method, and optionally its JSON parameters")
		}
		var params map[string]any
		if len(args) == 2 {
			if err := json.Unmarshal([]byte(args[1]), &params); err != nil || params == nil {
				return usageError(e, c, "the parameters are not a JSON object")
			}
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
