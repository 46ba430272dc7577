//go:build race

package rpc

// raceOn: this test binary has the race detector, whose runtime does not
// start under the memory bound git runs with (monitorProgram builds a
// binary without it for the status monitor's hook).
const raceOn = true
