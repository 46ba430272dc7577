//go:build !unix

package relay

// openFileLimit: no descriptor limit to read here.
func openFileLimit() int { return maxTotalConns + reservedFDs }
