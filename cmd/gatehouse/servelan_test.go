package main

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/logbuf"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/trust"
)

// The terminal asks the person about a pair request and the answer sets
// the grant; q hides the code; a pairing shows the next link.
func TestTerminalAllowsAPairRequest(t *testing.T) {
	reg := rpc.NewRegistry()
	srv, err := lan.Listen(lan.Options{Addr: netip.MustParseAddr("127.0.0.1"), Kind: lan.Loopback},
		rpc.HostOptions{Registry: reg, Targets: rpc.NewTargets(fsguard.Options{Home: "/nonexistent"}, gate.Options{}), FullAccess: func() bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close(context.Background())
	out := &logbuf.Buffer{}
	in, answer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ui := &tui{e: &env{stdout: out}, p: srv.Pairing(), kind: lan.Loopback, n: 1, url: srv.URL(), showQR: true}
	ui.banner()
	first := srv.Pairing().Link()
	if !strings.Contains(out.String(), first) || !strings.Contains(out.String(), "▀") {
		t.Fatalf("no link or QR code:\n%s", out.String())
	}
	go ui.watch(ctx)
	go ui.keys(ctx, in)

	l, _ := lan.ParseLink(first)
	paired := make(chan lan.Paired, 1)
	shown := make(chan string, 1)
	go func() {
		p, err := lan.PairShowingCode(context.Background(), &http.Client{Timeout: time.Minute}, l, "Safari on iPhone", func(c string) { shown <- c })
		if err != nil {
			t.Error(err)
		}
		paired <- p
	}()
	code := <-shown // the device's code is the terminal's
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), `Pair request from "Safari on iPhone" at 127.0.0.1 with code `+code+`. Allow only if the device shows the same code: [v]iew, [c]ontrol or [f]ull access, or [d]eny?`) {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, _ = io.WriteString(answer, "c\n")
	p := <-paired
	if p.Grant != trust.Control.String() {
		t.Fatalf("paired with %q", p.Grant)
	}
	for !strings.Contains(out.String(), "Paired. 1 of 3 devices") {
		if time.Now().After(deadline) {
			t.Fatalf("no pairing shown:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if next := srv.Pairing().Link(); next == first || !strings.Contains(out.String(), next) {
		t.Fatal("the next link was not shown")
	}
}

// Names the relay sends are printed without their terminal escapes.
func TestRelayNamesArePrintedSafely(t *testing.T) {
	if got := shown("phone\x1b[2J\x1b]0;owned\a"); strings.ContainsAny(got, "\x1b\a") {
		t.Fatalf("escapes reached the terminal: %q", got)
	}
	if got := shown("Pixel 8 — Ana"); got != "Pixel 8 — Ana" {
		t.Fatalf("a plain name changed: %q", got)
	}
}
