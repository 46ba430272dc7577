//go:build !linux

package gate

// kernelWallOff: there is no kernel wall to leave off here.
func kernelWallOff(*Repo) {}

func kernelWallOffAll() {}

func kernelWallIsOff() bool { return true }
