package gate

// kernelWallOff leaves Landlock off for r's closed calls, as macOS and
// kernels without Landlock run gatehouse.
func kernelWallOff(r *Repo) { r.wall.landlockOffForTest = true }
