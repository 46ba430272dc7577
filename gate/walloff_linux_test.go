package gate

// kernelWallOff leaves Landlock off for r's closed calls, as macOS and
// kernels without Landlock run gatehouse.
func kernelWallOff(r *Repo) { r.wall.landlockOffForTest = true }

// kernelWallOff leaves Landlock off for every closed child of the test
// binary (GATEHOUSE_KERNEL_WALL=off).
func kernelWallOffAll() { kernelWallOffForTest.Store(true) }

// kernelWallIsOff reports the suite running with the kernel wall off: a
// test of the kernel wall itself has nothing to look at then.
func kernelWallIsOff() bool { return kernelWallOffForTest.Load() }
