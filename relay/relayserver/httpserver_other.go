//go:build !unix

package relayserver

// openFileLimit: no descriptor limit to read here.
func openFileLimit() int { return maxTotalConns + reservedFDs }
