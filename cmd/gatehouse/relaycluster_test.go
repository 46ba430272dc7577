package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/pgtest"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/relay/relayserver"
)

func runRelayCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args)
	return code, out.String(), errb.String()
}

// The cluster flags refuse what cannot work, with a sentence, before
// anything listens: nodes without a shared database, a database URL that
// is not PostgreSQL, NATS options without NATS.
func TestRelayClusterFlagsRefuse(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats", "nats://127.0.0.1:1"}, "--nats needs --database postgres://"},
		{[]string{"--database", "mysql://x/y"}, "--database takes a PostgreSQL URL"},
		{[]string{"--nats-creds", "x.creds"}, "go with --nats"},
	} {
		code, _, errOut := runRelayCmd(t, append([]string{"relay", "--data", data, "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("relay %v: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// relay invite --database writes the invite where every node reads it,
// and a password in the URL never reaches an error.
func TestRelayInviteIntoPostgres(t *testing.T) {
	url := pgtest.Start(t)
	code, out, errOut := runRelayCmd(t, "relay", "invite", "--data", t.TempDir(), "--database", url, "--account", "team")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st, err := relayserver.OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := relay.Device{ID: "d-one", Name: "phone", Platform: "cli", PublicKey: base64.StdEncoding.EncodeToString(make([]byte, 32))}
	acct, _, err := st.RegisterInvite(context.Background(), strings.TrimSpace(out), d)
	if err != nil || acct.Login != "team" {
		t.Fatalf("the printed code did not sign in through the database: %v %+v", err, acct)
	}
	for _, u := range []string{"postgres://user:hunter2@127.0.0.1:1/db?connect_timeout=2",
		"postgres://user@127.0.0.1:1/db?connect_timeout=2&password=hunter2"} { // pgx takes both
		code, _, errOut = runRelayCmd(t, "relay", "invite", "--data", t.TempDir(), "--database", u, "--account", "team")
		if code != exitUsage || strings.Contains(errOut, "hunter2") || !strings.Contains(errOut, "@127.0.0.1:1") {
			t.Fatalf("%s: exit %d: %q", u, code, errOut)
		}
	}
}
