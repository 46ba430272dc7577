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

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "login",
		summary: "sign this computer in to a relay",
		usage:   "--relay URL [--invite CODE] [--name NAME]",
		help: `Signs this computer in to a relay as one device of an account, so that
'gatehouse serve --relay' can answer your other devices through it, or
'gatehouse call --relay' can call one of them.

With --invite, the code from 'gatehouse relay invite' signs in. Without it, a
relay that offers GitHub shows a code to enter at github.com (the OAuth device
flow: no secret on this computer; the GitHub token goes to the relay once and
is not kept).

This device's X25519 key is made once and kept, with the relay token, in
relay-secrets.json (0600) in the state folder; signing in again keeps the key.
The key's fingerprint is printed: the person granting this device on another
computer compares it with what 'gatehouse devices' shows there.`,
		setup: setupLogin,
	})
	register(&command{
		name:    "logout",
		summary: "sign this computer out of its relay",
		usage:   "",
		help: `Removes this device from its relay account (its tokens stop working at once)
and forgets the token here. The device key stays, so signing in again keeps the
same fingerprint.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int { return runLogout },
	})
}

// httpClient is for the relay and GitHub: bounded in time.
var httpClient = &http.Client{Timeout: 30 * time.Second}

func identity(e *env) (*relay.Identity, *trust.Store, int) {
	store, code := openState(e)
	if store == nil {
		return nil, nil, code
	}
	return relay.OpenIdentity(store.Dir()), store, exitOK
}

func setupLogin(fs *flag.FlagSet) func(*env, []string) int {
	url := fs.String("relay", "", "the relay's address (https://...)")
	invite := fs.String("invite", "", "a one-time code from 'gatehouse relay invite'")
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
		id, _, code := identity(e)
		if id == nil {
			return code
		}
		if *name == "" {
			*name, _ = os.Hostname()
		}
		ctx := context.Background()
		provider, credential := "invite", *invite
		if *invite == "" {
			cfg, err := relay.FetchConfig(ctx, httpClient, *url)
			if err != nil {
				fmt.Fprintf(e.stderr, "gatehouse login: %s\n", trimRelay(err))
				return exitFound
			}
			if !slices.Contains(cfg.Providers, "github") {
				fmt.Fprintln(e.stderr, "gatehouse login: this relay signs in by invite; ask its operator for a code ('gatehouse relay invite') and pass --invite CODE")
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
		fmt.Fprintf(e.stdout, "Signed in to %s as %s.\nThis device: %s (%q), key fingerprint %s\n",
			p.URL, p.Account.Login, p.DeviceID, p.Name, trust.Fingerprint(key.PublicKey().Bytes()))
		return exitOK
	}
}

func runLogout(e *env, args []string) int {
	if len(args) > 0 {
		return usageError(e, named("logout"), "logout takes no arguments")
	}
	id, _, code := identity(e)
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
		return ae.Message
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
