package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/gatehouse/gatehouse/internal/service"
	"github.com/gatehouse/gatehouse/trust"
)

func init() {
	register(&command{
		name:    "service install",
		summary: "run serve as your always-on service",
		usage:   "[--relay URL] [--listen ADDR] [--print] [PATH...]",
		help: `Installs 'gatehouse serve --no-tui' with the folders named (default: the
current folder) as your own service, so it keeps serving when you are away:
a systemd user unit on Linux (~/.config/systemd/user/gatehouse.service,
started with 'systemctl --user enable --now', its log in the journal:
'journalctl --user -u gatehouse'; it says when 'loginctl enable-linger' is
needed to run after you log out), a launch agent on macOS
(~/Library/LaunchAgents/dev.gatehouse.serve.plist, its log in
~/Library/Logs/gatehouse.log). It restarts when it fails, and uses this
state folder, so devices and grants are the ones you manage here. The
binary must be an installed one (go install ./cmd/gatehouse), not go run's.
--print shows the file without installing it.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			relayURL := fs.String("relay", "", "also answer devices through the relay at `URL`")
			listen := fs.String("listen", "", "serve's --listen (`ADDR`: auto, tailscale, lan, loopback, an address, with :PORT)")
			print := fs.Bool("print", false, "print the unit (or plist) instead of installing it")
			return func(e *env, args []string) int { return runServiceInstall(e, *relayURL, *listen, *print, args) }
		},
	})
	register(&command{
		name:    "service uninstall",
		summary: "stop and remove the service",
		usage:   "",
		help:    `Stops the service 'gatehouse service install' made and removes its file. Paired devices and grants stay for the next serve.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			return func(e *env, args []string) int {
				home, _ := os.UserHomeDir()
				if err := service.Uninstall(home, e.getenv("XDG_CONFIG_HOME"), service.SystemTools, e.stdout); err != nil {
					fmt.Fprintf(e.stderr, "gatehouse service uninstall: %v\n", err)
					return exitFound
				}
				return exitOK
			}
		},
	})
	register(&command{
		name:    "service status",
		summary: "whether the service is installed and running",
		usage:   "",
		help:    `Says whether the service is installed and what the service manager says of it; 'gatehouse status' says what the running serve does.`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			return func(e *env, args []string) int {
				home, _ := os.UserHomeDir()
				installed, state := service.Status(home, e.getenv("XDG_CONFIG_HOME"), service.SystemTools)
				fmt.Fprintf(e.stdout, "service: %s\n", state)
				if !installed {
					return exitFound
				}
				return exitOK
			}
		},
	})
}

func runServiceInstall(e *env, relayURL, listen string, print bool, paths []string) int {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse service install: %v\n", err)
		return exitUsage
	}
	dir, err := trust.DefaultDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse service install: %v\n", err)
		return exitUsage
	}
	var args []string
	if relayURL != "" {
		args = append(args, "--relay", relayURL)
	}
	if listen != "" {
		args = append(args, "--listen", listen)
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		c, err := trust.Canonical(p)
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse service install: %v\n", err)
			return exitUsage
		}
		args = append(args, c)
	}
	configDir, err := trust.DefaultConfigDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse service install: %v\n", err)
		return exitUsage
	}
	s := service.Spec{Exe: exe, Args: args, StateDir: dir, ConfigDir: configDir}
	if print {
		if err := s.Check(); err != nil {
			fmt.Fprintf(e.stderr, "gatehouse service install: %v\n", err)
			return exitUsage
		}
		if runtime.GOOS == "darwin" {
			home, _ := os.UserHomeDir()
			_, log := service.Paths(runtime.GOOS, home, "")
			fmt.Fprint(e.stdout, service.LaunchdPlist(s, log))
		} else {
			fmt.Fprint(e.stdout, service.SystemdUnit(s))
		}
		return exitOK
	}
	home, _ := os.UserHomeDir()
	if err := service.Install(s, home, e.getenv("XDG_CONFIG_HOME"), service.SystemTools, e.stdout); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse service install: %v\n", err)
		return exitFound
	}
	return exitOK
}
