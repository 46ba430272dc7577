//go:build !linux

package gate

import "golang.org/x/sys/unix"

// physicalMemory is this computer's memory in bytes (4 GiB when the system
// does not say).
func physicalMemory() int64 {
	if n, err := unix.SysctlUint64("hw.memsize"); err == nil && n > 0 {
		return int64(n)
	}
	return 4 << 30
}
