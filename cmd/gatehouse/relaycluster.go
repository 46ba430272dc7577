package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gatehouse/gatehouse/relay/relayserver"
)

// clusterFlags are the flags of a relay node that shares its accounts and
// devices with others.
type clusterFlags struct {
	database, node                 string
	nats, creds, ca, cert, certKey string
}

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.database, "database", "", "keep accounts in this PostgreSQL database (postgres://...) instead of SQLite in --data; nodes of one relay share it")
	fs.StringVar(&c.nats, "nats", "", "join the relay's other nodes through these NATS servers (nats://host:4222, comma-separated); needs --database")
	fs.StringVar(&c.creds, "nats-creds", "", "NATS credentials file (user JWT and NKey seed)")
	fs.StringVar(&c.ca, "nats-ca", "", "CA certificates (PEM) that NATS servers' TLS certificates must chain to")
	fs.StringVar(&c.cert, "nats-cert", "", "client certificate (PEM) for NATS TLS, with --nats-key")
	fs.StringVar(&c.certKey, "nats-key", "", "client key (PEM) for NATS TLS, with --nats-cert")
	fs.StringVar(&c.node, "node", "", "this node's name in metrics and logs (default: the host's name)")
}

// join connects to NATS when --nats is given; nil means one node.
func (c clusterFlags) join() (*relayserver.Cluster, error) {
	switch {
	case c.nats == "":
		if c.creds != "" || c.ca != "" || c.cert != "" || c.certKey != "" {
			return nil, errors.New("--nats-creds, --nats-ca, --nats-cert and --nats-key go with --nats")
		}
		return nil, nil
	case c.database == "":
		return nil, errors.New("--nats needs --database postgres://...: the nodes of a relay share their accounts, and SQLite is one machine's file")
	case (c.cert == "") != (c.certKey == ""):
		return nil, errors.New("--nats-cert and --nats-key go together")
	}
	var opts []nats.Option
	if c.creds != "" {
		opts = append(opts, nats.UserCredentials(c.creds))
	}
	if c.ca != "" {
		opts = append(opts, nats.RootCAs(c.ca))
	}
	if c.cert != "" {
		opts = append(opts, nats.ClientCert(c.cert, c.certKey))
	}
	node := c.node
	if node == "" {
		node = "relay"
	}
	nc, err := relayserver.DialNATS(c.nats, node, opts...)
	if err != nil {
		return nil, fmt.Errorf("NATS at %s: %w", redactURL(c.nats), err)
	}
	return &relayserver.Cluster{NATS: nc}, nil
}

// openRelayStore opens PostgreSQL when database is set, else the SQLite
// file in dir.
func openRelayStore(dir, database string) (*relayserver.Store, error) {
	if database == "" {
		return relayserver.OpenStore(filepath.Join(dir, "relay.db"))
	}
	if !strings.HasPrefix(database, "postgres://") && !strings.HasPrefix(database, "postgresql://") {
		return nil, errors.New("--database takes a PostgreSQL URL (postgres://user@host/db); without it the relay keeps SQLite in --data")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := relayserver.OpenPostgres(ctx, database)
	if err != nil {
		return nil, fmt.Errorf("database at %s: %w", redactURL(database), err)
	}
	return st, nil
}

// redactURL drops the password from a URL (or a list of them) for a
// message: in the user part, and in a password parameter (pgx takes
// ?password=).
func redactURL(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if scheme := strings.Index(p, "://"); scheme >= 0 && scheme < at {
				p = p[:scheme+3] + "…@" + p[at+1:]
			}
		}
		if q := strings.IndexByte(p, '?'); q >= 0 {
			p = p[:q] + "?…"
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}
