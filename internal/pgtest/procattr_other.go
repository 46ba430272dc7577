//go:build !linux

package pgtest

import "syscall"

// procAttr runs a PostgreSQL program as cred in its own process group.
// Only Linux can have it killed with the test binary; elsewhere the
// cleanup's stop is all there is.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
