package leakcheck

import (
	"os"
	"testing"
)

// The leak check's own tests leave nothing either.
func TestMain(m *testing.M) { os.Exit(Run(m)) }
