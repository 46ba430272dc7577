package service

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A spec whose paths hold what systemd and XML read specially: spaces,
// quotes, backslashes, %, $, &, <.
func trickySpec(t *testing.T) Spec {
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin", "gatehouse")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Spec{Exe: exe, Args: []string{"--relay", "https://relay.example", filepath.Join(dir, `my "code" 100% $HOME\x`), filepath.Join(dir, "a&b<c>")},
		StateDir: filepath.Join(dir, "state $Y dir"), ConfigDir: filepath.Join(dir, "config $Y dir")}
}

// The unit systemd itself accepts (systemd-analyze verify, where it is
// installed), and whose ExecStart reads back as the command line given.
func TestSystemdUnit(t *testing.T) {
	s := trickySpec(t)
	unit := SystemdUnit(s)
	for _, want := range []string{"Restart=on-failure", "WantedBy=default.target", "--no-tui", `100%% $$HOME\\x`} {
		if !strings.Contains(unit, want) {
			t.Fatalf("unit lacks %q:\n%s", want, unit)
		}
	}
	if !strings.Contains(unit, `"GATEHOUSE_HOME=`+s.StateDir+`" "GATEHOUSE_CONFIG=`+s.ConfigDir+`"`) {
		t.Fatalf("Environment= must name both folders and keep $ single (it is not special there):\n%s", unit)
	}
	one := s
	one.ConfigDir = s.StateDir // GATEHOUSE_HOME alone: one folder
	if strings.Contains(SystemdUnit(one), "GATEHOUSE_CONFIG") {
		t.Fatalf("GATEHOUSE_CONFIG for one folder:\n%s", SystemdUnit(one))
	}
	bad := s
	bad.Exe = filepath.Join(t.TempDir(), "b-dol$X", "gatehouse")
	if bad.Check() == nil {
		t.Fatal("a program path with $ was accepted: systemd would run another program")
	}
	var exec_ string
	for _, l := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			exec_ = v
		}
	}
	if got, want := unquoteSystemd(exec_), s.argv(); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("ExecStart reads back as %q, want %q", got, want)
	}
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze to verify the unit with")
	}
	file := filepath.Join(t.TempDir(), "gatehouse.service")
	if err := os.WriteFile(file, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, "verify", file).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// unquoteSystemd splits an ExecStart line as systemd does for the forms
// SystemdUnit writes: words, double quotes with C escapes, %% and $$.
func unquoteSystemd(line string) []string {
	var words []string
	var cur strings.Builder
	inQ, have := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inQ && c == '\\' && i+1 < len(line):
			i++
			switch line[i] {
			case 'n':
				cur.WriteByte('\n')
			case 't':
				cur.WriteByte('\t')
			default:
				cur.WriteByte(line[i])
			}
		case c == '"':
			inQ, have = !inQ, true
		case !inQ && c == ' ':
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		case (c == '%' || c == '$') && i+1 < len(line) && line[i+1] == c:
			cur.WriteByte(c)
			i++
			have = true
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words
}

// The launch agent is well-formed XML (plutil where there is one) with
// every argument as given.
func TestLaunchdPlist(t *testing.T) {
	s := trickySpec(t)
	p := LaunchdPlist(s, "/Users/me/Library/Logs/gatehouse.log")
	for _, want := range []string{"<string>dev.gatehouse.serve</string>", "a&amp;b&lt;c&gt;", "my &quot;code&quot; 100% $HOME", "<key>SuccessfulExit</key>", "--no-tui", "<key>GATEHOUSE_CONFIG</key>\n\t\t<string>" + s.ConfigDir + "</string>"} {
		if !strings.Contains(p, want) {
			t.Fatalf("plist lacks %q:\n%s", want, p)
		}
	}
	if tool, err := exec.LookPath("plutil"); err == nil {
		file := filepath.Join(t.TempDir(), "a.plist")
		os.WriteFile(file, []byte(p), 0o644)
		if out, err := exec.Command(tool, "-lint", file).CombinedOutput(); err != nil {
			t.Fatalf("plutil: %v %s", err, out)
		}
	}
}

// Install writes the unit where the user's systemd reads it, reloads and
// starts it, and says when lingering is off; a go run binary is refused;
// uninstall stops it and removes the file. The service manager is a
// recorder here: this machine's systemd may not run (where it does, the
// same commands start and stop the unit).
func TestInstallAndUninstall(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("the Linux unit's steps")
	}
	home := t.TempDir()
	var ran []string
	tools := func(name string, args ...string) (string, error) {
		ran = append(ran, name+" "+strings.Join(args, " "))
		if name == "loginctl" {
			return "no", nil
		}
		return "", nil
	}
	var out strings.Builder
	s := trickySpec(t)
	if err := Install(s, home, "", tools, &out); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(home, ".config", "systemd", "user", "gatehouse.service")
	if b, err := os.ReadFile(unit); err != nil || string(b) != SystemdUnit(s) {
		t.Fatalf("unit file: %v", err)
	}
	if strings.Join(ran, "; ") != "systemctl --user daemon-reload; systemctl --user enable --now gatehouse.service; loginctl show-user "+os.Getenv("USER")+" -p Linger --value" ||
		!strings.Contains(out.String(), "loginctl enable-linger") {
		t.Fatalf("ran %q, said %q", ran, out.String())
	}
	if installed, _ := Status(home, "", tools); !installed {
		t.Fatal("status: not installed")
	}
	tmp := s
	tmp.Exe = "/tmp/go-build123/b001/exe/gatehouse"
	if err := Install(tmp, home, "", tools, &out); err != ErrTemporaryBinary {
		t.Fatalf("a go run binary: %v", err)
	}
	ran = nil
	if err := Uninstall(home, "", tools, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) || !strings.Contains(strings.Join(ran, "; "), "disable --now gatehouse.service") {
		t.Fatalf("after uninstall: %v, ran %q", err, ran)
	}
}
