// Package service installs 'gatehouse serve' as the user's own always-on
// service: a systemd user unit on Linux, a launchd agent on macOS, each
// running 'serve --no-tui' with the folders given, restarted when it fails,
// its output in the system's log (the journal; on macOS a log file the
// agent names). It starts the system's own tools (systemctl, loginctl,
// launchctl) and nothing else.
package service

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Name is the unit's and the agent's name.
const (
	unitName  = "gatehouse.service"
	agentName = "dev.gatehouse.serve"
)

// Spec is what the service runs: the gatehouse binary, serve's arguments,
// and the state folder it keeps (so the service and the person's own
// commands share devices, grants and the switch).
type Spec struct {
	Exe      string
	Args     []string // after "serve"
	StateDir string
	// ConfigDir is the config folder (trust.DefaultConfigDir) when it is
	// not StateDir: GATEHOUSE_HOME alone would make the service read its
	// settings (memory bound, clones folder) from the state folder, while
	// the person's own commands read them from the config folder.
	ConfigDir string
}

// env is the service's environment, in order.
func (s Spec) env() [][2]string {
	env := [][2]string{{"GATEHOUSE_HOME", s.StateDir}}
	if s.ConfigDir != "" && s.ConfigDir != s.StateDir {
		env = append(env, [2]string{"GATEHOUSE_CONFIG", s.ConfigDir})
	}
	return env
}

// ErrTemporaryBinary: the binary is go run's, which disappears.
var ErrTemporaryBinary = errors.New("this gatehouse was built by 'go run' into a temporary folder, which a service cannot keep running; install it first (go install ./cmd/gatehouse) and run that one")

// Check refuses a binary a service could not keep running.
func (s Spec) Check() error {
	if !filepath.IsAbs(s.Exe) {
		return fmt.Errorf("the service needs the binary's absolute path, not %q", s.Exe)
	}
	if strings.Contains(s.Exe, string(filepath.Separator)+"go-build") {
		return ErrTemporaryBinary
	}
	for _, c := range s.Exe {
		// systemd takes the program's path as written: no quotes, no
		// specifiers, no variables (a $ would name another program).
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._+-@:,", c)) {
			return fmt.Errorf("the service manager cannot run a program from %q (a space, quote, $ or %% in its path); install gatehouse where its path has only letters, digits and /._+-@:,", s.Exe)
		}
	}
	return nil
}

// argv is the command line the service runs.
func (s Spec) argv() []string {
	return append([]string{s.Exe, "serve", "--no-tui"}, s.Args...)
}

// systemdQuote writes one ExecStart argument as systemd reads it: in
// double quotes when it has anything but plain characters, with \ and "
// escaped; % (a specifier) doubled, and $ (an environment variable in
// ExecStart) doubled.
func systemdQuote(w string) string {
	return quoteWord(strings.ReplaceAll(w, "$", "$$"))
}

// envQuote writes an Environment= assignment: as an argument, but $ is
// not special there, so it stays single.
func envQuote(w string) string { return quoteWord(w) }

func quoteWord(w string) string {
	w = strings.ReplaceAll(w, "%", "%%")
	plain := w != ""
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-:=+,@%$", c)) {
			plain = false
		}
	}
	if plain {
		return w
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(w) + `"`
}

// envWords are the Environment= assignments of env.
func envWords(env [][2]string) []string {
	var out []string
	for _, kv := range env {
		out = append(out, envQuote(kv[0]+"="+kv[1]))
	}
	return out
}

// plistEnv is the EnvironmentVariables entries of env.
func plistEnv(env [][2]string) string {
	var b strings.Builder
	for _, kv := range env {
		fmt.Fprintf(&b, "\t\t<key>%s</key>\n\t\t<string>%s</string>\n", xmlText(kv[0]), xmlText(kv[1]))
	}
	return b.String()
}

// SystemdUnit is the user unit for s.
func SystemdUnit(s Spec) string {
	words := []string{s.Exe} // checked plain: systemd takes the path as written
	for _, w := range s.argv()[1:] {
		words = append(words, systemdQuote(w))
	}
	return fmt.Sprintf(`# Installed by 'gatehouse service install'; removed by 'gatehouse service uninstall'.
[Unit]
Description=gatehouse: your checkouts to your phone
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=%s
Environment=%s
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`, strings.Join(words, " "), strings.Join(envWords(s.env()), " "))
}

// xmlText escapes text for a plist.
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}

// LaunchdPlist is the launch agent for s, logging to logFile.
func LaunchdPlist(s Spec, logFile string) string {
	var args strings.Builder
	for _, w := range s.argv() {
		fmt.Fprintf(&args, "\t\t<string>%s</string>\n", xmlText(w))
	}
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>%s</string>
	<key>ProgramArguments</key>
	<array>
%s	</array>
	<key>EnvironmentVariables</key>
	<dict>
%s	</dict>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>StandardOutPath</key>
	<string>%s</string>
	<key>StandardErrorPath</key>
	<string>%s</string>
</dict>
</plist>
`, agentName, args.String(), plistEnv(s.env()), xmlText(logFile), xmlText(logFile))
}

// Paths says where the service's file goes for home (and XDG_CONFIG_HOME
// on Linux), and where a launch agent logs.
func Paths(goos, home, xdgConfig string) (file, log string) {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "LaunchAgents", agentName+".plist"), filepath.Join(home, "Library", "Logs", "gatehouse.log")
	}
	if xdgConfig == "" {
		xdgConfig = filepath.Join(home, ".config")
	}
	return filepath.Join(xdgConfig, "systemd", "user", unitName), ""
}

// Tools runs the system's service tools; tests replace it.
type Tools func(name string, args ...string) (string, error)

// SystemTools runs the named tool and returns what it printed.
func SystemTools(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Install writes the service's file and starts it with the system's tools,
// saying on out what it did and what is left to the person (linger).
func Install(s Spec, home, xdgConfig string, run Tools, out io.Writer) error {
	if err := s.Check(); err != nil {
		return err
	}
	file, log := Paths(runtime.GOOS, home, xdgConfig)
	text := SystemdUnit(s)
	if runtime.GOOS == "darwin" {
		text = LaunchdPlist(s, log)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "Wrote %s.\n", file)
	steps := [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", unitName}}
	if runtime.GOOS == "darwin" {
		steps = [][]string{{"launchctl", "bootstrap", fmt.Sprintf("gui/%d", os.Getuid()), file}}
	}
	for _, st := range steps {
		if msg, err := run(st[0], st[1:]...); err != nil {
			return fmt.Errorf("%s: %v %s (the file is in place; start it with '%s' when the service manager runs)", strings.Join(st, " "), err, msg, strings.Join(st, " "))
		}
	}
	if runtime.GOOS != "darwin" {
		if l, err := run("loginctl", "show-user", os.Getenv("USER"), "-p", "Linger", "--value"); err == nil && l == "no" {
			fmt.Fprintf(out, "It runs while you are logged in. To keep it running after you log out and start it at boot: loginctl enable-linger %s\n", os.Getenv("USER"))
		}
		fmt.Fprintln(out, "Started. Its log: journalctl --user -u gatehouse")
	} else {
		fmt.Fprintf(out, "Started. Its log: %s\n", log)
	}
	return nil
}

// Uninstall stops the service and removes its file.
func Uninstall(home, xdgConfig string, run Tools, out io.Writer) error {
	file, _ := Paths(runtime.GOOS, home, xdgConfig)
	if runtime.GOOS == "darwin" {
		_, _ = run("launchctl", "bootout", fmt.Sprintf("gui/%d/%s", os.Getuid(), agentName))
	} else {
		_, _ = run("systemctl", "--user", "disable", "--now", unitName)
	}
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	} else if err == nil {
		fmt.Fprintf(out, "Removed %s.\n", file)
	}
	if runtime.GOOS != "darwin" {
		_, _ = run("systemctl", "--user", "daemon-reload")
	}
	fmt.Fprintln(out, "The service is stopped and uninstalled; paired devices stay paired for the next serve.")
	return nil
}

// Status says whether the service is installed and what the service
// manager says of it.
func Status(home, xdgConfig string, run Tools) (installed bool, state string) {
	file, _ := Paths(runtime.GOOS, home, xdgConfig)
	if _, err := os.Stat(file); err != nil {
		return false, "not installed"
	}
	if runtime.GOOS == "darwin" {
		if out, err := run("launchctl", "print", fmt.Sprintf("gui/%d/%s", os.Getuid(), agentName)); err == nil && strings.Contains(out, "state = running") {
			return true, "running"
		}
		return true, "installed, not running"
	}
	out, _ := run("systemctl", "--user", "is-active", unitName)
	if out == "" {
		out = "unknown (the user's service manager does not answer)"
	}
	return true, out
}
