package connlimit

import (
	"net"
	"testing"
	"time"
)

// dialFrom opens a TCP connection to addr from the loopback address src.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", src, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer reports whether the server closed c without sending anything.
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// serve accepts on l and holds each connection open, writing nothing, until
// the test ends; it returns the connections accepted.
func serve(t *testing.T, l net.Listener) <-chan net.Conn {
	accepted := make(chan net.Conn, 100)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() { l.Close() })
	return accepted
}

func TestPerAddressCapClosesExcessAndLeavesOthersAlone(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(raw, 2, 10)
	accepted := serve(t, l)
	addr := raw.Addr().String()

	dialFrom(t, "127.0.0.2", addr)
	dialFrom(t, "127.0.0.2", addr)
	<-accepted
	<-accepted
	third := dialFrom(t, "127.0.0.2", addr)
	if !closedByServer(third) {
		t.Fatal("a third connection from one address stayed open over a cap of 2")
	}
	other := dialFrom(t, "127.0.0.1", addr)
	select {
	case <-accepted:
	case <-time.After(2 * time.Second):
		t.Fatal("another address was refused while one address was at its cap")
	}
	if closedByServer(other) {
		t.Fatal("another address's connection was closed")
	}
	if open, refused, _ := Stats(l); open != 3 || refused != 1 {
		t.Fatalf("Stats = %d open, %d refused; want 3, 1", open, refused)
	}
}

func TestTotalCapAndSlotFreedOnClose(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(raw, 0, 1)
	accepted := serve(t, l)
	addr := raw.Addr().String()

	dialFrom(t, "127.0.0.2", addr)
	first := <-accepted
	if !closedByServer(dialFrom(t, "127.0.0.3", addr)) {
		t.Fatal("a second connection stayed open over a total cap of 1")
	}
	first.Close()
	first.Close() // a second Close must not free a second slot
	dialFrom(t, "127.0.0.3", addr)
	select {
	case <-accepted:
	case <-time.After(2 * time.Second):
		t.Fatal("the slot was not freed when the server closed the connection")
	}
	if open, _, _ := Stats(l); open != 1 {
		t.Fatalf("open = %d after close and a new accept; want 1", open)
	}
}

// The key on every platform: the whole address, its port left out, an
// IPv4-mapped address as its IPv4 form.
func TestKeyIsTheWholeAddress(t *testing.T) {
	a := keyOf(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2::1"), Port: 1})
	b := keyOf(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:ffff::9"), Port: 1})
	if a == b {
		t.Fatalf("two hosts of one /64 share the key %v", a)
	}
	if keyOf(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2::1"), Port: 2}) != a {
		t.Fatal("the port is part of the key")
	}
	if keyOf(&net.TCPAddr{IP: net.ParseIP("::ffff:10.0.0.1")}) != keyOf(&net.TCPAddr{IP: net.ParseIP("10.0.0.1")}) {
		t.Fatal("an IPv4-mapped address is keyed apart from its IPv4 form")
	}
}
