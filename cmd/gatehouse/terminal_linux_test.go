package main

import (
	"context"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/logbuf"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/trust"
)

// openPTY opens a pseudo-terminal: the side a person types into, and the
// side serve reads as its standard input.
func openPTY(t *testing.T) (typing, stdin *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal's other side: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// The pairing prompt reads like single keys ("v, c or f"), and on a
// terminal it takes them so: "c" with no Enter allows the request with
// control (a newcomer typing c left the phone waiting for an Enter nobody
// knew to press). The terminal is put back as it was afterwards.
func TestPairPromptTakesOneKeyOnATerminal(t *testing.T) {
	typing, stdin := openPTY(t)
	if !isInteractive(stdin) {
		t.Fatal("a pseudo-terminal does not read as a terminal")
	}
	before, err := unix.IoctlGetTermios(int(stdin.Fd()), ioctlReadTermios)
	if err != nil {
		t.Fatal(err)
	}
	restore, err := rawKeys(stdin)
	if err != nil {
		t.Fatalf("cbreak mode: %v", err)
	}
	srv, err := lan.Listen(lan.Options{Addr: netip.MustParseAddr("127.0.0.1"), Kind: lan.Loopback},
		rpc.HostOptions{Registry: rpc.NewRegistry(), Targets: rpc.NewTargets(fsguard.Options{Home: "/nonexistent"}, gate.Options{}), FullAccess: func() bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close(context.Background())
	out := &logbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ui := &tui{e: &env{stdout: out}, p: srv.Pairing(), kind: lan.Loopback, n: 1, url: srv.URL(), single: true, settle: time.Nanosecond}
	ui.banner()
	go ui.watch(ctx)
	go ui.keys(ctx, stdin)

	l, _ := lan.ParseLink(srv.Pairing().Link())
	paired := make(chan lan.Paired, 1)
	shown := make(chan string, 1)
	go func() {
		p, err := lan.Pair(context.Background(), &http.Client{Timeout: time.Minute}, l, "Safari on iPhone", func(c string) { shown <- c })
		if err != nil {
			t.Error(err)
		}
		paired <- p
	}()
	code := <-shown
	waitFor(t, out, "with code "+code+". Allow only if the device shows the same code: v (view), c (control) or f (full access), or d to deny. ")
	if _, err := typing.Write([]byte("c")); err != nil { // no Enter
		t.Fatal(err)
	}
	select {
	case p := <-paired:
		if p.Grant != trust.Control.String() {
			t.Fatalf("paired with %q\n%s", p.Grant, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the key c alone did not answer the request:\n%s", out.String())
	}
	restore()
	after, err := unix.IoctlGetTermios(int(stdin.Fd()), ioctlReadTermios)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag {
		t.Fatalf("the terminal was not put back: lflag %#x, was %#x", after.Lflag, before.Lflag)
	}
}

// Without a terminal the answers are lines, and the prompt says "then
// Enter" (TestTerminalAllowsTheRequestOnScreen answers through a pipe).
func TestPromptSaysEnterWithoutATerminal(t *testing.T) {
	for _, single := range []bool{false, true} {
		out := &logbuf.Buffer{}
		ui := &tui{e: &env{stdout: out}, single: single}
		ui.prompt([]*lan.Request{{ID: "r1", Name: "phone", From: "127.0.0.1", Code: "123 456"}})
		got := out.String()
		if want := "v (view), c (control) or f (full access) then Enter, or d then Enter to deny"; !single && !contains(got, want) {
			t.Errorf("line input: no %q in %q", want, got)
		}
		if single && contains(got, "Enter") {
			t.Errorf("single keys: the prompt asks for Enter: %q", got)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
