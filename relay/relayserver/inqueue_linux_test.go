package relayserver

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// inQueue is how many bytes wait in c's receive queue (SIOCINQ), -1 when
// the socket cannot say.
func inQueue(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	_ = raw.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
