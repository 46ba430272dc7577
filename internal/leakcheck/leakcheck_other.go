//go:build !linux

package leakcheck

import "time"

// Start does nothing here: only Linux has a child subreaper.
func Start() error { return nil }

// Sweep finds nothing here.
func Sweep(grace time.Duration) []Proc { return nil }
