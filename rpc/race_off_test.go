//go:build !race

package rpc

const raceOn = false
