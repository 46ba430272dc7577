package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/relay/relayserver"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "relay",
		summary: "run a relay that forwards sealed frames between devices",
		usage:   "[--listen ADDR] [--data DIR] [--tls-cert FILE --tls-key FILE] [--proxy-header NAME [--proxy-hops N]] [--metrics-listen ADDR [--metrics-token-file FILE]] [--github-client-id ID] [--push-webhook URL] [--max-conns-per-address N] [--max-conns N] [--database postgres://... [--nats URL [--nats-creds FILE] [--nats-ca FILE] [--nats-cert FILE --nats-key FILE]] [--node NAME]]",
		help: `Runs a relay: devices sign in to it (by invite, or with GitHub), see which of
their devices are online, and send each other frames that are sealed end to end.
The relay sees device ids, sizes and timing, never content: it cannot open a
frame, and it cannot make a host obey a device the person at that host did not
grant.

Sign-in is by invite (run 'gatehouse relay invite --account NAME' and give the
code to the person signing in), and also by GitHub when --github-client-id is
set: the client secret of that OAuth app is read from the environment variable
GATEHOUSE_GITHUB_CLIENT_SECRET, never from the command line.

Serve it over TLS with --tls-cert and --tls-key, or behind a TLS proxy on this
machine (then --listen on a loopback address and --proxy-header X-Forwarded-For).
Devices refuse a plain http relay unless it is on their own machine.

Behind --proxy-header, the header is read only from a loopback peer, and the
client's address (what the per-address sign-in limit counts) is the last
element of the header, all its lines taken as one list: the one the proxy
appended. What the client wrote before it is never read. With N proxies that
each append (a CDN in front of the local proxy), --proxy-hops N takes the Nth
element from the right; each proxy must be reachable only through the one
before it. A request from the proxy with no address there is refused, and
logged once a minute: check the header's name and the number of hops.

It keeps its database (SQLite) and the secret that signs tokens in --data
(default: the state folder's "relay" folder). Logs go to standard error;
liveness is at /healthz and readiness at /readyz (503 while draining, or
while the database or NATS does not answer). Metrics are never on the API:
--metrics-listen ADDR serves them at http://ADDR/metrics (Prometheus,
labelled with --node, default the host's name); without it they are not
served. An ADDR other than a loopback IP needs --metrics-token-file FILE
(32 to 4096 visible characters, in a file only this user can read, e.g.
'openssl rand -hex 32'), which a scraper sends as "Authorization: Bearer
TOKEN" (Prometheus: authorization.credentials_file); the listener is plain
http, so keep it on a private network. SIGINT or SIGTERM drain it: it
refuses new sockets, closes every socket with "going away" (clients come
back after a random wait of up to 5 s, through the load balancer to another
node), leaves the cluster and stops.

Several nodes: give each the same --database postgres://... (accounts,
devices, invites and the counts behind per-account limits; SQLite is for one
node) and the same --nats URL (frames and presence between the nodes: one
NATS subject per device, subscribed by the node that holds its socket), and
the same token secret file in each --data. Put them behind a TCP or HTTP
load balancer that checks /readyz. --nats takes one or more servers,
comma-separated, with nats.go's credentials (--nats-creds, or user and
password in the URL) and TLS (--nats-ca, --nats-cert/--nats-key); the
database URL is pgx's (sslmode and the rest as PostgreSQL takes them). See
docs/relay.md.

Slow clients are bounded: a request's headers must arrive within 10 s and the
whole request within 30 s, a kept-alive connection closes after 60 s idle, and
at most 256 connections from one address (--max-conns-per-address) and what
the descriptor limit allows in all (--max-conns) are open at once; the excess
is closed at once. Behind --proxy-header the per-address cap is off unless
given: the proxy sees the clients' addresses and must limit them.`,
		setup: setupRelay,
	})
	register(&command{
		name:    "relay invite",
		summary: "make a one-time sign-in code for a relay account",
		usage:   "--account NAME [--data DIR | --database postgres://...]",
		help: `Prints a one-time code that signs one device in to the relay's account NAME
(made on first use). The code is 128 random bits, valid for 15 minutes and for
one sign-in, and stored only as a hash. Run it on the relay's machine, with the
same --data as the relay (or, for nodes sharing PostgreSQL, the same
--database, from any machine that reaches it); the relay need not be stopped.

The person signing in runs: gatehouse login --relay URL --invite - (and pastes
the code on standard input, where other users of the computer cannot see it)`,
		setup: setupRelayInvite,
	})
}

func relayDataDir(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	state, err := trust.DefaultDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "relay"), nil
}

func setupRelay(fs *flag.FlagSet) func(*env, []string) int {
	listen := fs.String("listen", "", "address to listen on (default 127.0.0.1:8080, or :8443 with TLS)")
	data := fs.String("data", "", "folder for the database and the token secret")
	cert := fs.String("tls-cert", "", "TLS certificate file (PEM)")
	key := fs.String("tls-key", "", "TLS key file (PEM)")
	ghID := fs.String("github-client-id", "", "offer GitHub sign-in through this OAuth app (secret in $GATEHOUSE_GITHUB_CLIENT_SECRET)")
	ghAPI := fs.String("github-api", "https://api.github.com", "GitHub's API base URL")
	webhook := fs.String("push-webhook", "", "POST push notices (counts only) to this URL; default: log them")
	proxy := fs.String("proxy-header", "", "take the client address from this header when the peer is a loopback proxy (the last element, which the proxy appended)")
	hops := fs.Int("proxy-hops", 0, "with --proxy-header: how many proxies append to it; the client address is the Nth element from the right (0: 1)")
	var metrics relayMetrics
	fs.StringVar(&metrics.addr, "metrics-listen", "", "serve Prometheus metrics at http://ADDR/metrics, apart from the API (default: not served)")
	fs.StringVar(&metrics.tokenFile, "metrics-token-file", "", "require this file's token as 'Authorization: Bearer' at --metrics-listen (needed unless ADDR is a loopback IP)")
	ready := fs.String("ready-file", "", "write the relay's URL to this file once it listens (for scripts)")
	perAddr := fs.Int("max-conns-per-address", 0, "open connections from one client address (0: 256, or no cap with --proxy-header, whose proxy must limit per client)")
	total := fs.Int("max-conns", 0, "open connections in all (0: the descriptor limit less a reserve)")
	debug := fs.Bool("debug", false, "log each connection")
	var cl clusterFlags
	cl.register(fs)
	return func(e *env, args []string) int {
		c := named("relay")
		if len(args) > 0 {
			return usageError(e, c, "unexpected argument %q", args[0])
		}
		if (*cert == "") != (*key == "") {
			return usageError(e, c, "--tls-cert and --tls-key go together")
		}
		if *hops != 0 && *proxy == "" {
			return usageError(e, c, "--proxy-hops goes with --proxy-header")
		}
		if err := metrics.check(); err != nil {
			return usageError(e, c, "%v", err)
		}
		dir, err := relayDataDir(*data)
		if err == nil {
			err = os.MkdirAll(dir, 0o700)
		}
		if err == nil {
			err = relayserver.CheckDataDir(dir)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse relay: %v\n", err)
			return exitUsage
		}
		level := slog.LevelInfo
		if *debug {
			level = slog.LevelDebug
		}
		logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
		if metrics.tokenFile != "" {
			if metrics.token, err = relayserver.LoadMetricsToken(metrics.tokenFile); err != nil {
				fmt.Fprintf(e.stderr, "gatehouse relay: %v\n", err)
				return exitUsage
			}
		}
		opts, closeStore, err := relayOptions(e, dir, *ghID, *ghAPI, *webhook, *proxy, cl, logger)
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse relay: %v\n", err)
			return exitUsage
		}
		defer closeStore()
		opts.ProxyHops = *hops
		srv, err := relayserver.New(opts)
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse relay: %v\n", err)
			return exitUsage
		}
		addr := *listen
		if addr == "" {
			addr = "127.0.0.1:8080"
			if *cert != "" {
				addr = ":8443"
			}
		}
		return serveRelay(e, srv, logger, addr, *cert, *key, *ready, connLimits(*perAddr, *total, *proxy != ""), metrics)
	}
}

func relayOptions(e *env, dir, ghID, ghAPI, webhook, proxy string, cl clusterFlags, logger *slog.Logger) (relayserver.Options, func(), error) {
	secret, err := relayserver.LoadSecret(filepath.Join(dir, "token-secret"))
	if err != nil {
		return relayserver.Options{}, nil, err
	}
	st, err := openRelayStore(dir, cl.database)
	if err != nil {
		return relayserver.Options{}, nil, err
	}
	o := relayserver.Options{Store: st, Secret: secret, Logger: logger, ProxyHeader: proxy, Node: cl.node}
	if o.Cluster, err = cl.join(); err != nil {
		st.Close()
		return o, nil, err
	}
	if ghID != "" {
		sec := e.getenv("GATEHOUSE_GITHUB_CLIENT_SECRET")
		if sec == "" {
			st.Close()
			return o, nil, errors.New("--github-client-id needs the app's client secret in GATEHOUSE_GITHUB_CLIENT_SECRET")
		}
		o.GitHub = &relayserver.GitHubApp{ClientID: ghID, ClientSecret: sec, APIBase: ghAPI}
	}
	if webhook != "" {
		o.Pusher = &relayserver.WebhookPusher{URL: webhook}
	}
	return o, func() {
		if o.Cluster != nil {
			o.Cluster.NATS.Close()
		}
		st.Close()
	}, nil
}

// connLimits are the relay's connection caps and timeouts. Behind a proxy
// every client has the proxy's address, so the per-address cap is off
// unless asked for: the proxy must limit per client.
func connLimits(perAddr, total int, proxied bool) relayserver.ConnLimits {
	lim := relayserver.DefaultConnLimits()
	if proxied {
		lim.PerAddr = 0
	}
	if perAddr > 0 {
		lim.PerAddr = perAddr
	}
	if total > 0 {
		lim.Total = total
	}
	return lim
}

// relayMetrics is where the relay serves its metrics: nowhere (addr ""),
// or addr, behind token when one is given.
type relayMetrics struct{ addr, tokenFile, token string }

// check refuses metrics that would be open to others: a listener beyond
// loopback without a token (it names the node and counts its devices'
// sockets and sign-in failures), and a token with no listener.
func (m relayMetrics) check() error {
	switch {
	case m.addr == "" && m.tokenFile != "":
		return errors.New("--metrics-token-file goes with --metrics-listen")
	case m.addr != "" && m.tokenFile == "" && !loopbackIP(m.addr):
		return fmt.Errorf("--metrics-listen %s is reachable from other machines: give --metrics-token-file FILE, or listen on 127.0.0.1", m.addr)
	}
	return nil
}

// loopbackIP reports whether addr (host:port) is a loopback IP address; a
// name or an empty host (every interface) is not.
func loopbackIP(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

// listen listens for the metrics on their own address, apart from the
// API, with the metrics listener's caps and timeouts.
func (m relayMetrics) listen(srv *relayserver.Server, logger *slog.Logger) (*http.Server, net.Listener, error) {
	raw, err := net.Listen("tcp", m.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	lim := relayserver.MetricsConnLimits()
	hs := relayserver.NewHTTPServer(srv.MetricsHandler(m.token), lim)
	hs.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	return hs, lim.Listen(raw), nil
}

func serveRelay(e *env, srv *relayserver.Server, logger *slog.Logger, addr, cert, key, ready string, lim relayserver.ConnLimits, metrics relayMetrics) int {
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse relay: %v\n", err)
		return exitUsage
	}
	l := lim.Listen(raw)
	var mhs *http.Server
	var ml net.Listener
	if metrics.addr != "" {
		if mhs, ml, err = metrics.listen(srv, logger); err != nil {
			_ = l.Close()
			fmt.Fprintf(e.stderr, "gatehouse relay: %v\n", err)
			return exitUsage
		}
	}
	scheme := "http"
	if cert != "" {
		scheme = "https"
	}
	url := scheme + "://" + l.Addr().String()
	if host, _, _ := net.SplitHostPort(l.Addr().String()); scheme == "http" && !net.ParseIP(host).IsLoopback() {
		logger.Warn("serving plain http on a non-loopback address: devices will refuse it; use --tls-cert/--tls-key or a TLS proxy")
	}
	hs := relayserver.NewHTTPServer(srv, lim)
	hs.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 2)
	go func() {
		if cert != "" {
			done <- hs.ServeTLS(l, cert, key)
		} else {
			done <- hs.Serve(l)
		}
	}()
	logger.Info("relay listening", "url", url, "maxConnsPerAddress", lim.PerAddr, "maxConns", lim.Total)
	if mhs != nil {
		go func() { done <- mhs.Serve(ml) }()
		logger.Info("relay metrics listening", "url", "http://"+ml.Addr().String()+"/metrics", "token", metrics.token != "")
	}
	if ready != "" {
		if err := atomicfile.Write(ready, []byte(url+"\n"), 0o600); err != nil {
			logger.Error("ready file", "err", err)
		}
	}
	select {
	case err := <-done:
		fmt.Fprintf(e.stderr, "gatehouse relay: %v\n", err)
		return exitUsage
	case <-ctx.Done():
	}
	logger.Info("stopping: closing sockets")
	srv.Shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if mhs != nil {
		_ = mhs.Shutdown(sctx)
	}
	return exitOK
}

func setupRelayInvite(fs *flag.FlagSet) func(*env, []string) int {
	account := fs.String("account", "", "the account the code signs in to")
	data := fs.String("data", "", "the relay's data folder")
	database := fs.String("database", "", "the relay's PostgreSQL database (postgres://...), when it has one")
	return func(e *env, args []string) int {
		c := named("relay invite")
		if *account == "" || len(args) > 0 {
			return usageError(e, c, "name the account with --account NAME")
		}
		dir, err := relayDataDir(*data)
		if err == nil {
			err = os.MkdirAll(dir, 0o700)
		}
		if err == nil {
			err = relayserver.CheckDataDir(dir)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse relay invite: %v\n", err)
			return exitUsage
		}
		st, err := openRelayStore(dir, *database)
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse relay invite: %v\n", err)
			return exitUsage
		}
		defer st.Close()
		code, err := st.CreateInvite(context.Background(), *account)
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse relay invite: %v\n", strings.TrimPrefix(err.Error(), "relay: "))
			return exitUsage
		}
		fmt.Fprintln(e.stdout, code)
		fmt.Fprintf(e.stderr, "One sign-in to account %q, valid for 15 minutes. Give the code to the person signing in, who runs\n  gatehouse login --relay URL --invite -\nand pastes it (standard input keeps it out of the process list).\n", *account)
		return exitOK
	}
}
