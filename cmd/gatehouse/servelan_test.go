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

// waitFor waits until out holds want, for up to 30 s.
func waitFor(t *testing.T, out *logbuf.Buffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in:\n%s", want, out.String())
		}
	}
}

// The terminal asks the person about one pair request at a time, and a key
// answers the request on screen and no other: a key pressed as another
// request takes its place does nothing. The answer sets the grant; a
// pairing shows the next link.
func TestTerminalAllowsTheRequestOnScreen(t *testing.T) {
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
	ui := &tui{e: &env{stdout: out}, p: srv.Pairing(), kind: lan.Loopback, n: 1, url: srv.URL(), showQR: true, settle: time.Hour}
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
		p, err := lan.Pair(context.Background(), &http.Client{Timeout: time.Minute}, l, "Safari on iPhone", func(c string) { shown <- c })
		if err != nil {
			t.Error(err)
		}
		paired <- p
	}()
	code := <-shown // the device's code is the terminal's
	waitFor(t, out, `Pair request from "Safari on iPhone" at 127.0.0.1 with code `+code+`. Allow only if the device shows the same code: v (view), c (control) or f (full access) then Enter`)
	// Pressed before the request has been on screen long enough to read:
	// nothing is allowed.
	_, _ = io.WriteString(answer, "f\n")
	waitFor(t, out, "The request on screen just changed")
	if st, _ := srv.Pairing().Status(); len(st.Devices) != 0 {
		t.Fatalf("a key pressed as the request appeared allowed it: %+v", st.Devices)
	}
	ui.mu.Lock()
	ui.settle = time.Nanosecond
	ui.mu.Unlock()
	_, _ = io.WriteString(answer, "c\n")
	p := <-paired
	if p.Grant != trust.Control.String() {
		t.Fatalf("paired with %q\n%s", p.Grant, out.String())
	}
	waitFor(t, out, "Paired. 1 of 3 devices")
	next := srv.Pairing().Link()
	if next == first {
		t.Fatal("the link was not replaced")
	}
	waitFor(t, out, next) // the next one's, shown after the pairing

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
