//go:build !linux

package gate

import (
	"os/exec"
	"runtime"

	"github.com/gatehouse/gatehouse/trust"
)

// confinement is empty: there is nothing to hold.
type confinement struct{}

// start starts cmd. Outside Linux there is no Landlock, and macOS does not
// enforce RLIMIT_AS, so a closed git child runs as before: the gates of
// decide.go and forced.go are the only wall. gatehouse doctor says so.
func (r *Repo) start(cmd *exec.Cmd, _ trust.Trust, _ sub) error {
	return cmd.Start()
}

// Walls reports that the kernel's walls are not available here.
func Walls(_ string, _ Options) WallReport {
	return WallReport{
		Landlock: "not available on " + osName(),
		Memory:   "not available on " + osName() + " (git's own pack limits of forced.go still apply)",
	}
}

func osName() string {
	if runtime.GOOS == "darwin" {
		return "macOS"
	}
	return runtime.GOOS
}

// startTool starts a tool that runs git itself (gh). Outside Linux there is
// no kernel wall: the gate's forced options reach the tool's git through
// GIT_CONFIG_COUNT (ghEnv), and nothing else holds it.
func startTool(cmd *exec.Cmd, _ *Repo, _ trust.Trust, _ string, _ []string) error {
	return cmd.Start()
}

// wallOff: there is no wall to switch off here.
func (r *Repo) wallOff() bool { return false }
