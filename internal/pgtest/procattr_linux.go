package pgtest

import "syscall"

// procAttr runs a PostgreSQL program as cred in its own process group (a
// stop reaches every process it forks), killed if the test binary dies.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
