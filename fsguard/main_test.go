package fsguard

import (
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/internal/leakcheck"
)

// The tests fail if a process they started outlives them (internal/leakcheck).
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
