package rpc

import (
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/leakcheck"
)

// The tests fail if a process they started outlives them (internal/leakcheck).
func TestMain(m *testing.M) {
	if gate.IsMonitorHook(os.Args[1:], os.Getenv) { // git runs this test binary as the status monitor's hook
		os.Exit(gate.MonitorHook(os.Args[1:], os.Getenv, os.Stdout))
	}
	os.Exit(leakcheck.Run(m))
}
