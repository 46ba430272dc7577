package gate

import (
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/internal/leakcheck"
)

// The tests fail if a process they started outlives them
// (internal/leakcheck says why: a forgotten git daemon is a server).
// GATEHOUSE_KERNEL_WALL=off runs them all with the kernel wall off, as
// macOS and kernels without Landlock run gatehouse: every attack must then
// be stopped by the gate alone (make test runs the suite both ways).
func TestMain(m *testing.M) {
	if IsMonitorHook(os.Args[1:], os.Getenv) { // git runs this test binary as the status monitor's hook
		os.Exit(MonitorHook(os.Args[1:], os.Getenv, os.Stdout))
	}
	if os.Getenv("GATEHOUSE_KERNEL_WALL") == "off" {
		kernelWallOffAll()
	}
	os.Exit(leakcheck.Run(m))
}
