package gate

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// Version reports the git that gatehouse would run ("" means "git" on
// PATH): its version line and absolute path. It runs through the same
// runner as every other git call, pinned to no repository.
func Version(ctx context.Context, git string) (version, path string, err error) {
	if git == "" {
		git = "git"
	}
	if path, err = exec.LookPath(git); err != nil {
		return "", "", fmt.Errorf("gate: %w", err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", "", fmt.Errorf("gate: %w", err)
	}
	r := &Repo{git: path, workTree: "/", gitDir: "/nonexistent", commonDir: "/nonexistent"}
	res, err := r.run(ctx, trust.Desktop(), openDecision, call{sub: sub{name: "version", readOnly: true, timeout: 10 * time.Second, maxOut: 4 << 10}})
	if err != nil {
		return "", path, err
	}
	return strings.TrimSpace(string(res.stdout)), path, nil
}

// LazyFetchSwitch reports whether this git honours GIT_NO_LAZY_FETCH (2.44
// and later). Older gits rely on the partial-clone refusal alone.
func LazyFetchSwitch(version string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(version, "git version "), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 2 || major == 2 && minor >= 44
}
