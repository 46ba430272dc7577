package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "login",
		summary: "sign this computer in to a relay",
		usage:   "--relay URL [--invite -] [--name NAME] [--for serve|call]",
		help: `Signs this computer in to a relay as one device of an account, so that
'gatehouse serve --relay' can answer your other devices through it (the
default, --for serve), or, with --for call, so that 'gatehouse call --relay'
can call one of them.

The two are separate devices of the account, each with its own id and key
(host/secrets.json and client/secrets.json in the state folder): a call made
on the serving computer never takes serve's place on the relay. Each signs in
once, with its own invite.

With --invite -, the code from 'gatehouse relay invite' is read from standard
input (scripts may set GATEHOUSE_INVITE instead): a code in the command line is
visible to every user of this computer. Without an invite, a relay that offers
GitHub shows a code to enter at github.com (the OAuth device flow: no secret on
this computer; the GitHub token goes to the relay once and is not kept).

    gatehouse relay invite --data DIR --account alice | gatehouse login --relay URL --invite -

This device's X25519 key is made once and kept, with the relay token, in
secrets.json (0600); signing in again keeps the key. The key's fingerprint is
printed: the person granting this device on another computer compares it with
what 'gatehouse devices' shows there, and a device calling this computer
compares it with what 'gatehouse call' shows the first time.`,
		setup: setupLogin,
	})
	register(&command{
		name:    "logout",
		summary: "sign this computer out of its relay",
		usage:   "[--for serve|call]",
		help: `Removes this device from its relay account (its tokens stop working at once)
and forgets the token here. The device key stays, so signing in again keeps the
same fingerprint. --for call signs out the identity 'gatehouse call' uses.`,
		setup: setupLogout,
	})
}

// httpClient is for the relay and GitHub: bounded in time.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// identity opens this computer's host identity (serve --relay, devices).
func identity(e *env) (*relay.Identity, *trust.Store, int) { return roleIdentity(e, relay.HostRole) }

// roleIdentity opens one of the state folder's relay identities: the
// host's, or the client's that gatehouse call uses.
func roleIdentity(e *env, role string) (*relay.Identity, *trust.Store, int) {
	store, code := openState(e)
	if store == nil {
		return nil, nil, code
	}
	id, err := relay.OpenRole(store.Dir(), role)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse: %v\n", err)
		return nil, nil, exitUsage
	}
	return id, store, exitOK
}

// roleFlag is --for: which identity a command signs in or out.
func roleFlag(fs *flag.FlagSet) *string {
	return fs.String("for", "serve", "serve: this computer as a host (serve --relay); call: the device 'gatehouse call' uses")
}

func roleOf(e *env, c *command, v string) (string, bool) {
	switch v {
	case "serve", "host":
		return relay.HostRole, true
	case "call", "client":
		return relay.ClientRole, true
	}
	usageError(e, c, "--for takes serve or call, not %q", v)
	return "", false
}

func setupLogin(fs *flag.FlagSet) func(*env, []string) int {
	url := fs.String("relay", "", "the relay's address (https://...)")
	invite := fs.String("invite", "", "- reads a one-time code from 'gatehouse relay invite' on standard input (or set GATEHOUSE_INVITE)")
	forRole := roleFlag(fs)
	name := fs.String("name", "", "this device's name on the account (default: the host name)")
	github := fs.String("github-url", "https://github.com", "GitHub's address, for the device flow")
	return func(e *env, args []string) int {
		c := named("login")
		if *url == "" || len(args) > 0 {
			return usageError(e, c, "name the relay with --relay URL")
		}
		if _, err := relay.CheckURL(*url); err != nil {
			return usageError(e, c, "%s", trimRelay(err))
		}
		role, ok := roleOf(e, c, *forRole)
		if !ok {
			return exitUsage
		}
		inviteCode, err := secretArg(e, "login", "invite", *invite, "GATEHOUSE_INVITE", "the invite code")
		if err != nil {
			return usageError(e, c, "--invite -: %v", err)
		}
		id, _, code := roleIdentity(e, role)
		if id == nil {
			return code
		}
		if *name == "" {
			*name, _ = os.Hostname()
		}
		ctx := context.Background()
		provider, credential := "invite", inviteCode
		if inviteCode == "" {
			cfg, err := relay.FetchConfig(ctx, httpClient, *url)
			if err != nil {
				fmt.Fprintf(e.stderr, "gatehouse login: %s\n", trimRelay(err))
				return exitFound
			}
			if !slices.Contains(cfg.Providers, "github") {
				fmt.Fprintln(e.stderr, "gatehouse login: this relay signs in by invite; ask its operator for a code ('gatehouse relay invite') and pass it with --invite - (on standard input)")
				return exitUsage
			}
			token, err := relay.DeviceFlow(ctx, httpClient, *github, cfg.GitHub.ClientID, func(code, uri string) {
				fmt.Fprintf(e.stderr, "Open %s and enter the code %s\n", uri, code)
			})
			if err != nil {
				fmt.Fprintf(e.stderr, "gatehouse login: %v\n", err)
				return exitFound
			}
			provider, credential = "github", token
		}
		p, err := id.SignIn(ctx, httpClient, *url, *name, runtime.GOOS, provider, credential)
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse login: %s\n", trimRelay(err))
			return exitFound
		}
		key, _ := id.Key()
		fmt.Fprintf(e.stdout, "Signed in to %s as %s.\nThis device: %s (%s), key fingerprint %s\n",
			p.URL, display.Text(p.Account.Login), p.DeviceID, display.Text(p.Name), trust.Fingerprint(key.PublicKey().Bytes()))
		if role == relay.ClientRole {
			fmt.Fprintln(e.stdout, "This is the device 'gatehouse call --relay' uses; grant it on the computer it calls.")
		}
		return exitOK
	}
}

func setupLogout(fs *flag.FlagSet) func(*env, []string) int {
	forRole := roleFlag(fs)
	return func(e *env, args []string) int {
		c := named("logout")
		if len(args) > 0 {
			return usageError(e, c, "logout takes no arguments")
		}
		role, ok := roleOf(e, c, *forRole)
		if !ok {
			return exitUsage
		}
		return runLogout(e, role)
	}
}

func runLogout(e *env, role string) int {
	id, _, code := roleIdentity(e, role)
	if id == nil {
		return code
	}
	p := id.Profile()
	if _, err := id.Token(); err != nil {
		fmt.Fprintln(e.stdout, "Not signed in.")
		return exitOK
	}
	err := id.Call(context.Background(), httpClient, http.MethodDelete, "/v1/devices/"+p.DeviceID, nil, nil)
	if err != nil && !errors.Is(err, relay.ErrSignedOut) {
		fmt.Fprintf(e.stderr, "gatehouse logout: the relay did not remove this device (%s); forgetting the token here anyway\n", trimRelay(err))
	}
	if err := id.SignOut(); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse logout: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "Signed out of %s.\n", p.URL)
	return exitOK
}

// trimRelay is an error for a person: the relay's sentence when it gave
// one, else the error without the package prefix.
func trimRelay(err error) string {
	var ae *relay.APIError
	if errors.As(err, &ae) {
		return display.Text(ae.Message) // the relay's words: untrusted
	}
	if s := refusal.Sentence(err); s != refusal.InternalSentence {
		return s
	}
	msg := err.Error()
	for len(msg) > 7 && msg[:7] == "relay: " {
		msg = msg[7:]
	}
	return msg
}
