package connlimit

import (
	"net"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"golang.org/x/sys/unix"
)

// Found by a black-box attack: IPv6 peers were keyed by their /64, and
// every host of a LAN shares the LAN's /64, so one laptop's connections
// used up the phone's budget too. Two hosts of one /64 each have their
// own; one address is still capped. Loopback carries one IPv6 address, so
// the hosts are real addresses of one /64 on the loopback of a network
// namespace of the test's own.
func TestHostsOfOneIPv6PrefixEachHaveTheirCap(t *testing.T) {
	const laptop, phone = "2001:db8:1:2::a", "2001:db8:1:2:ffff::b" // one /64
	ownNetworkNamespace(t, "2001:db8:1:2::1", laptop, phone)
	raw, err := net.Listen("tcp", "[2001:db8:1:2::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(raw, 2, 10)
	accepted := serve(t, l)
	addr := raw.Addr().String()

	dialFrom(t, laptop, addr)
	dialFrom(t, laptop, addr)
	<-accepted
	<-accepted
	if !closedByServer(dialFrom(t, laptop, addr)) {
		t.Fatal("a third connection from one IPv6 address stayed open over a cap of 2")
	}
	other := dialFrom(t, phone, addr)
	select {
	case <-accepted:
	case <-time.After(2 * time.Second):
		t.Fatal("another host of the same /64 was refused: the two share one budget")
	}
	if closedByServer(other) {
		t.Fatal("another host of the same /64 was closed")
	}
}

// ownNetworkNamespace moves the test's goroutine, locked to its thread, to
// a network namespace of its own whose loopback is up and holds addrs (so
// the test changes nothing of the machine's network). The thread is never
// unlocked: it ends with the test. Sockets must be made on this goroutine.
func ownNetworkNamespace(t *testing.T, addrs ...string) {
	t.Helper()
	needRoot(t)
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		t.Fatalf("a network namespace of the test's own: %v", err)
	}
	cmds := [][]string{{"link", "set", "lo", "up"}}
	for _, a := range addrs {
		cmds = append(cmds, []string{"-6", "addr", "add", a + "/128", "dev", "lo", "nodad"})
	}
	for _, args := range cmds { // a child forked from this thread is in its namespace
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	// The kernel adds an address's local route after the command returns:
	// until then a SYN to it goes unanswered for a whole retransmit.
	probe, err := net.Listen("tcp", "["+addrs[0]+"]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	go func() {
		for c, err := probe.Accept(); err == nil; c, err = probe.Accept() {
			c.Close()
		}
	}()
	for _, a := range addrs {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(a)}, Timeout: 100 * time.Millisecond}
		for deadline := time.Now().Add(10 * time.Second); ; {
			c, err := d.Dial("tcp", probe.Addr().String())
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never answered in the namespace: %v", a, err)
			}
		}
	}
}

// needRoot skips a test that needs root (here: a network namespace), or
// fails it when the run requires root (GATEHOUSE_REQUIRE=root,
// internal/testenv; make test sets it).
func needRoot(t *testing.T) {
	t.Helper()
	testenv.Require(t, "root", os.Geteuid() == 0, "needs root for a network namespace")
}
