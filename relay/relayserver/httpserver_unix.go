//go:build unix

package relayserver

import "syscall"

// openFileLimit is the process's soft descriptor limit (Go raises it to the
// hard one at start).
func openFileLimit() int {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil || lim.Cur > 1<<30 {
		return maxTotalConns + reservedFDs
	}
	return int(lim.Cur)
}
