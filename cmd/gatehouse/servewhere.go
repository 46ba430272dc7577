package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// splitListen takes --listen as ADDR, a mode (auto, lan...) or, as most
// servers take it, ADDR:PORT or [ADDR]:PORT; the port may come from --port
// instead, but not from both with different values. What the address may
// be is still decided by lan.Pick: never public, never all interfaces.
func splitListen(listen string, port int) (string, int, error) {
	host, rawPort, err := net.SplitHostPort(listen)
	if err != nil {
		return listen, port, nil // no port in it: ADDR or a mode
	}
	p, err := strconv.ParseUint(rawPort, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("--listen %s: the port is 0 to 65535", listen)
	}
	if port != 0 && port != int(p) {
		return "", 0, fmt.Errorf("--listen %s and --port %d name two ports; give one", listen, port)
	}
	return host, int(p), nil
}

// servedFolderWarning is what serve says at start about a served folder
// that is "/", the home folder or above it, or "" for a project folder.
// Serving those is allowed (the gate and the secret-file rules still hold),
// but it puts far more in a device's reach than a project.
func servedFolderWarning(path, home string) string {
	abs := canonical(path)
	home = canonical(home)
	switch {
	case abs == string(filepath.Separator):
		return "Serving / puts every folder of this computer in your devices' reach (secret files stay hidden below full access); serve a project folder instead."
	case home != "" && abs == home:
		return "Serving your home folder puts all of it in your devices' reach (secret files stay hidden below full access); serve a project folder instead."
	case home != "" && strings.HasPrefix(home, abs+string(filepath.Separator)):
		return fmt.Sprintf("Serving %s puts your home folder and more in your devices' reach (secret files stay hidden below full access); serve a project folder instead.", abs)
	}
	return ""
}

// canonical is path made absolute with its links resolved, or as given when
// that fails (serve reports a missing folder itself).
func canonical(path string) string {
	if path == "" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// warnServedFolders prints servedFolderWarning for each folder served.
func warnServedFolders(e *env, paths []string) {
	home, _ := os.UserHomeDir()
	for _, p := range paths {
		if w := servedFolderWarning(p, home); w != "" {
			fmt.Fprintf(e.stderr, "gatehouse serve: warning: %s\n", w)
		}
	}
}
