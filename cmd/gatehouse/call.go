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
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/relay/link"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/rpc/methods"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "call",
		summary: "call a method on another computer, as a device",
		usage:   "(--lan - | [--relay URL] --host ID [--host-fingerprint FP]) METHOD [JSON | - | @FILE]",
		help: `Calls one method on another computer as a device, sealed end to end, and
prints the result as JSON; a refusal prints its code and the host's sentence and
exits 1.

--lan - reads the pairing link of a computer running 'gatehouse serve' on a LAN
or Tailscale address from standard input (scripts may set GATEHOUSE_LAN_LINK
instead; a link in the command line is visible to every user of this computer):
the first call pairs through the link (it prints a pair code; the person at
that computer allows the request showing the same code, and chooses the
grant), and the pairing is kept in this state folder (lan-pairings.json, 0600)
for the next calls, across restarts of that serve, until it is revoked there.
Each call opens a session of its own with a fresh key exchange; nothing it
keeps opens a recorded call.

--host ID calls a device of the relay account running 'gatehouse serve
--relay', as the device 'gatehouse login --for call' signed in (its own id and
key, separate from this computer's serve). The first call to a computer shows
its key fingerprint and pins it: compare it with what 'gatehouse doctor' prints
on that computer. Later calls refuse any other key before anything is sent to
it. --host-fingerprint FP pins the fingerprint up front (or accepts a changed
key after checking it at the computer): the call is refused unless the
computer shows that key.

A change that may only run once (git.commit, git.push, git.fetch, git.pull,
worktree.create, worktree.merge, worktree.remove) goes with a sendId: if the
reply is lost, it is sent once more under the same id and the host answers
from memory; if that is lost too, gatehouse says so rather than risk doing it
twice.

"target" names the project: its id, or its folder's name as the page shows
it; when the computer serves one project, it may be left out (a projects.list
first finds it), and a name that is not served, or a target left out with
several served, is refused with the list of choices. JSON too long for the command line comes on
standard input with "-" (then give the pairing link in GATEHOUSE_LAN_LINK), or
from a file with "@FILE" (at most 8 MiB). Examples:

    gatehouse call --relay https://relay.example --host d-abc git.status
    gatehouse call --host d-abc files.write @write.json`,
		setup: setupCall,
	})
}

func setupCall(fs *flag.FlagSet) func(*env, []string) int {
	relayURL := fs.String("relay", "", "the relay (default: the one this computer signed in to)")
	host := fs.String("host", "", "the id of the computer to call through the relay ('gatehouse devices' lists them)")
	lanFlag := fs.String("lan", "", "- reads the pairing link of a computer serving on a LAN or Tailscale address from standard input (or set GATEHOUSE_LAN_LINK)")
	hostFP := fs.String("host-fingerprint", "", "refuse unless the computer's key has this fingerprint (and pin it)")
	return func(e *env, args []string) int {
		c := named("call")
		if *lanFlag == "-" && len(args) == 2 && args[1] == "-" {
			return usageError(e, c, "standard input carries the pairing link or the parameters, not both; give the link in GATEHOUSE_LAN_LINK")
		}
		lanLink := ""
		if *host == "" {
			var err error
			if lanLink, err = secretArg(e, "call", "lan", *lanFlag, "GATEHOUSE_LAN_LINK", "the pairing link"); err != nil {
				return usageError(e, c, "--lan -: %v", err)
			}
		}
		if (*host == "") == (lanLink == "") || len(args) < 1 || len(args) > 2 {
			return usageError(e, c, "name the computer with --lan - (the link on standard input) or --host ID, then a method, and optionally its JSON parameters")
		}
		*hostFP = strings.ToLower(strings.TrimSpace(*hostFP))
		if *hostFP != "" && !relay.ValidFingerprint(*hostFP) {
			return usageError(e, c, "--host-fingerprint takes 32 hex digits, as 'gatehouse doctor' prints them")
		}
		params, err := callParams(e, args)
		if err != nil {
			return usageError(e, c, "%v", err)
		}
		reg := rpc.NewRegistry()
		if err := methods.Register(reg); err != nil {
			fmt.Fprintf(e.stderr, "gatehouse call: %v\n", err)
			return exitUsage
		}
		if unknownMethod(e, reg, "call", args[0]) {
			return exitUsage // the computer called runs the same methods, and answers a name it does not know with "Unknown method."
		}
		wait, once := 30*time.Second, false
		m, _ := reg.Lookup(args[0])
		if m != nil {
			once = m.Once
			if m.Wait > 0 {
				wait = m.Wait
			}
		}
		if lanLink != "" {
			return callLAN(e, lanLink, m, args[0], params, wait, once)
		}
		id, _, code := roleIdentity(e, relay.ClientRole)
		if id == nil {
			return code
		}
		if code := checkCallSignIn(e, c, id, *relayURL); code != exitOK {
			return code
		}
		ctx := context.Background()
		dev, err := link.DialPinned(ctx, id, *host, *hostFP, nil)
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse call: %s\n", personal(err))
			return exitFound
		}
		defer dev.Close()
		if fp, first := dev.HostFingerprint(); first {
			fmt.Fprintf(e.stderr, "First call to %s: its key fingerprint is %s. Compare it with what 'gatehouse doctor' prints on that computer; from now on this device refuses any other key for it.\n", *host, fp)
		}
		params, err = fillCallTarget(ctx, m, params, func(ctx context.Context) ([]byte, error) {
			return dev.Call(ctx, "projects.list", nil, wait)
		})
		if err != nil {
			return usageError(e, c, "%v", err)
		}
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

// callParams reads the call's JSON parameters (written out, "-" or
// "@FILE"), keeping numbers exactly as written.
func callParams(e *env, args []string) (map[string]any, error) {
	if len(args) < 2 {
		return nil, nil
	}
	raw, err := readParams(e, args[1])
	if err != nil {
		return nil, err
	}
	var params map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil || params == nil || dec.More() {
		return nil, errors.New("the parameters are not a JSON object")
	}
	return params, nil
}

// checkCallSignIn refuses early when the identity gatehouse call uses is
// not signed in (to relayURL, when given).
func checkCallSignIn(e *env, c *command, id *relay.Identity, relayURL string) int {
	p := id.Profile()
	want := relayURL
	if want == "" {
		want = p.URL
	}
	if relayURL != "" {
		u, err := relay.CheckURL(relayURL)
		if err != nil {
			return usageError(e, c, "%s", trimRelay(err))
		}
		want = u.String()
	}
	if _, err := id.Token(); err != nil || p.URL == "" || p.URL != want {
		if want == "" {
			want = "URL"
		}
		fmt.Fprintf(e.stderr, "gatehouse call: this computer has no device signed in to %s for calls (serve's sign-in is separate); run 'gatehouse login --for call --relay %s --invite -' first\n", want, want)
		return exitUsage
	}
	return exitOK
}

// printCall prints a call's result, or its refusal and exit 1.
func printCall(e *env, out []byte, err error) int {
	if err != nil {
		var re *rpc.RemoteError
		if errors.As(err, &re) {
			fmt.Fprintf(e.stderr, "%s: %s\n", display.Text(string(re.Code)), display.Text(refusal.Sentence(re)))
		} else {
			fmt.Fprintf(e.stderr, "%s\n", display.Text(personal(err)))
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
// with that computer (or it was forgotten there), opens a session, and
// calls.
func callLAN(e *env, rawLink string, m *rpc.Method, method string, params map[string]any, wait time.Duration, once bool) int {
	l, err := lan.ParseLink(rawLink)
	if err != nil {
		return usageError(e, named("call"), "%v", err)
	}
	store, code := openState(e)
	if store == nil {
		return code
	}
	hc := &http.Client{Timeout: 2 * time.Minute}
	ctx := context.Background()
	se, err := lanSession(ctx, e, store, hc, l)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse call: %s\n", personal(err))
		return exitFound
	}
	conn := se.Conn()
	params, err = fillCallTarget(ctx, m, params, func(ctx context.Context) ([]byte, error) {
		cctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		return conn.Call(cctx, "projects.list", nil)
	})
	if err != nil {
		return usageError(e, named("call"), "%v", err)
	}
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
	return printCall(e, out, err)
}

// lanSession opens a session with the computer behind link l: pairing first
// when this state folder has no pairing with it (or that computer forgot
// it), reconnecting when it restarted and lost this device's ticket. The
// pairing file is locked meanwhile, and saved with the new ticket before
// any call is made.
func lanSession(ctx context.Context, e *env, store *trust.Store, hc *http.Client, l lan.Link) (*lan.Session, error) {
	release, err := store.LockCallPairings()
	if err != nil {
		return nil, err
	}
	defer release()
	file := filepath.Join(store.Dir(), lanPairingsFile)
	pairings := map[string]lan.Paired{}
	if data, err := atomicfile.ReadBounded(file, 1<<20); err == nil {
		_ = json.Unmarshal(data, &pairings)
	}
	name, _ := os.Hostname()
	if u := e.getenv("USER"); u != "" {
		name += " as " + u // the same user on the same computer is the same device
	}
	name = "gatehouse call on " + name
	showCode := func(code string) {
		fmt.Fprintf(e.stderr, "Pair code %s: allow the request at the computer only if it shows the same code.\n", code)
	}
	for attempt := 0; ; attempt++ {
		p, known := pairings[l.Base]
		if !known {
			fmt.Fprintf(e.stderr, "Asking %s to pair; allow it there.\n", l.Base)
			if p, err = lan.Pair(ctx, hc, l, name, showCode); err != nil {
				return nil, err
			}
		}
		se, err := lan.Resume(ctx, hc, &p)
		if errors.Is(err, lan.ErrRestarted) {
			fmt.Fprintf(e.stderr, "%s restarted since this device last called it; asking it to allow this device again.\n", l.Base)
			if p, err = lan.Reconnect(ctx, hc, p, name, showCode); err == nil {
				se, err = lan.Resume(ctx, hc, &p)
			}
		}
		if errors.Is(err, lan.ErrNotPaired) && known && attempt == 0 {
			delete(pairings, l.Base) // that serve forgot this device: pair again
			_ = saveJSON(file, pairings)
			continue
		}
		if err != nil {
			return nil, err
		}
		pairings[l.Base] = p
		if err := saveJSON(file, pairings); err != nil {
			return nil, err
		}
		return se, nil
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
	if s := refusal.Sentence(err); s != refusal.InternalSentence {
		return s
	}
	return trimRelay(err)
}
