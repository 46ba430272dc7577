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
	code := leakcheck.Run(m)
	if hookBuilt != "" {
		_ = os.RemoveAll(hookBuilt)
	}
	os.Exit(code)
}

// hookBuilt is the folder of a hook program the tests built (monitor_test.go).
var hookBuilt string
