package trust

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// splitStore opens a state folder and a config folder apart, as on Linux
// without GATEHOUSE_HOME, under base.
func splitStore(t *testing.T, base string) *Store {
	t.Helper()
	s, err := OpenStoreWithConfig(filepath.Join(base, "state", "gatehouse"), filepath.Join(base, "config", "gatehouse"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The switch is read from the state folder only, the person's settings
// from the config folder only: a "fullAccess" in the config file is never
// read, and the state file's old copies are not read once the config file
// exists (doctor names them).
func TestSettingsSplit(t *testing.T) {
	s := splitStore(t, t.TempDir())
	if err := s.SetFullAccess(true); err != nil {
		t.Fatal(err)
	}
	if s.SettingsFile() != filepath.Join(s.ConfigDir(), "settings.json") || s.ConfigDir() == s.Dir() {
		t.Fatalf("settings file %s, config folder %s, state folder %s", s.SettingsFile(), s.ConfigDir(), s.Dir())
	}
	writeFile(t, s.SettingsFile(), `{"fullAccess": false, "gitMemoryLimitMiB": 512, "clonesDir": "/c"}`)
	want := Settings{FullAccess: true, GitMemoryLimitMiB: 512, ClonesDir: "/c"}
	if got := s.Settings(); got != want {
		t.Fatalf("Settings = %+v, want %+v", got, want)
	}
	if err := s.SetFullAccess(false); err != nil {
		t.Fatal(err)
	}
	writeFile(t, s.SettingsFile(), `{"fullAccess": true, "clonesDir": "/c"}`)
	if s.FullAccess() || s.Settings().FullAccess {
		t.Fatal("the switch was read from the config folder")
	}
	if strings.Contains(readFile(t, s.SettingsFile()), "fullAccess\": false") {
		t.Fatal("SetFullAccess wrote to the config folder")
	}

	writeFile(t, filepath.Join(s.Dir(), settingsFile), `{"fullAccess": false, "clonesDir": "/old", "gitMemoryTotalMiB": 9}`)
	if got := s.Settings(); got.ClonesDir != "/c" || got.GitMemoryTotalMiB != 0 {
		t.Fatalf("the state file's old settings were read beside the config file: %+v", got)
	}
	if got := s.StaleSettings(); !reflect.DeepEqual(got, []string{"gitMemoryTotalMiB", "clonesDir"}) {
		t.Fatalf("StaleSettings = %v", got)
	}
	if moved, err := s.MoveSettings(); err != nil || moved != nil {
		t.Fatalf("MoveSettings over an existing config file: %v, %v", moved, err)
	}
	if !strings.Contains(readFile(t, filepath.Join(s.Dir(), settingsFile)), "/old") {
		t.Fatal("the state file's copies were dropped though they were not moved")
	}

	writeFile(t, s.SettingsFile(), `{"clonesDir": `)
	if got := s.Settings(); got != (Settings{}) {
		t.Fatalf("a corrupt config file read as %+v, want the defaults", got)
	}
	if p := s.Problems(); len(p) != 1 || !strings.Contains(p[0].Error(), "config folder's settings.json") {
		t.Fatalf("Problems = %v, want the config file named", p)
	}
}

// Settings kept in the state folder's settings.json from before the split
// are read from there until moved, moved once (the config file first),
// and nothing is lost.
func TestSettingsMoveOnce(t *testing.T) {
	s := splitStore(t, t.TempDir())
	old := filepath.Join(s.Dir(), settingsFile)
	writeFile(t, old, `{"fullAccess": true, "gitMemoryLimitMiB": 300, "clonesDir": "/home/me/clones"}`)
	want := Settings{FullAccess: true, GitMemoryLimitMiB: 300, ClonesDir: "/home/me/clones"}
	if got := s.Settings(); got != want {
		t.Fatalf("before the move Settings = %+v, want %+v", got, want)
	}
	moved, err := s.MoveSettings()
	if err != nil || !reflect.DeepEqual(moved, []string{"gitMemoryLimitMiB", "clonesDir"}) {
		t.Fatalf("MoveSettings = %v, %v", moved, err)
	}
	if got := s.Settings(); got != want {
		t.Fatalf("after the move Settings = %+v, want %+v", got, want)
	}
	if text := readFile(t, old); strings.Contains(text, "clonesDir") || !strings.Contains(text, `"fullAccess": true`) {
		t.Fatalf("the state file after the move:\n%s", text)
	}
	if text := readFile(t, s.SettingsFile()); !strings.Contains(text, `"clonesDir": "/home/me/clones"`) || strings.Contains(text, "fullAccess") {
		t.Fatalf("the config file after the move:\n%s", text)
	}
	if fi, err := os.Stat(s.SettingsFile()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config file mode: %v %v", fi, err)
	}
	if moved, err := s.MoveSettings(); err != nil || moved != nil {
		t.Fatalf("a second MoveSettings: %v, %v (the message is said once)", moved, err)
	}
	again, err := OpenStoreWithConfig(s.Dir(), s.ConfigDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Settings(); got != want {
		t.Fatalf("another process reads %+v, want %+v", got, want)
	}

	// Missing or corrupt: nothing to move, the defaults, no crash.
	for _, text := range []string{"", `{"clonesDir": `} {
		s := splitStore(t, t.TempDir())
		if text != "" {
			writeFile(t, filepath.Join(s.Dir(), settingsFile), text)
		}
		if moved, err := s.MoveSettings(); err != nil || moved != nil {
			t.Fatalf("MoveSettings of %q: %v, %v", text, moved, err)
		}
		if got := s.Settings(); got != (Settings{}) {
			t.Fatalf("%q read as %+v", text, got)
		}
	}
}

// GATEHOUSE_HOME names one folder for state and settings alike, as before
// the split: the config folder is the state folder and nothing moves.
func TestGatehouseHomeIsOneFolder(t *testing.T) {
	base := t.TempDir()
	t.Setenv("GATEHOUSE_HOME", filepath.Join(base, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "xdg-config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "xdg-state"))
	dir, err := DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	configDir, err := DefaultConfigDir()
	if err != nil || configDir != dir {
		t.Fatalf("DefaultConfigDir = %q, %v, want the state folder %q", configDir, err, dir)
	}
	s, err := OpenStoreWithConfig(dir, configDir)
	if err != nil {
		t.Fatal(err)
	}
	if s.ConfigDir() != s.Dir() || s.SettingsFile() != filepath.Join(dir, settingsFile) {
		t.Fatalf("config folder %s, settings file %s", s.ConfigDir(), s.SettingsFile())
	}
	writeFile(t, s.SettingsFile(), `{"fullAccess": true, "gitMemoryTotalMiB": 700, "clonesDir": "/c"}`)
	if moved, err := s.MoveSettings(); err != nil || moved != nil {
		t.Fatalf("MoveSettings in one folder: %v, %v", moved, err)
	}
	if got, want := s.Settings(), (Settings{FullAccess: true, GitMemoryTotalMiB: 700, ClonesDir: "/c"}); got != want {
		t.Fatalf("Settings = %+v, want %+v", got, want)
	}
	if _, err := os.Stat(filepath.Join(base, "xdg-config")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("XDG_CONFIG_HOME was used beside GATEHOUSE_HOME: %v", err)
	}

	// The service gatehouse installs sets GATEHOUSE_CONFIG beside
	// GATEHOUSE_HOME, so it reads the settings the person's commands read.
	t.Setenv("GATEHOUSE_CONFIG", filepath.Join(base, "cfg"))
	if got, _ := DefaultConfigDir(); got != filepath.Join(base, "cfg") {
		t.Fatalf("DefaultConfigDir with GATEHOUSE_CONFIG = %q", got)
	}
	t.Setenv("GATEHOUSE_CONFIG", "")

	t.Setenv("GATEHOUSE_HOME", "")
	if got, _ := DefaultConfigDir(); got != filepath.Join(base, "xdg-config", "gatehouse") {
		t.Fatalf("DefaultConfigDir with XDG_CONFIG_HOME = %q", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative") // the XDG spec: a relative path is ignored
	t.Setenv("HOME", base)
	if got, _ := DefaultConfigDir(); got != filepath.Join(base, ".config", "gatehouse") {
		t.Fatalf("DefaultConfigDir without XDG_CONFIG_HOME = %q", got)
	}
}

// The config folder names where a device's clone is written, so it gets
// the state folder's check: under a folder others can write it is
// refused by Guard (serve) and by MoveSettings, and a guarded store whose
// config folder is opened to others later stops, reading the defaults.
func TestConfigFolderWritableByOthersIsRefused(t *testing.T) {
	base := t.TempDir()
	s := splitStore(t, base)
	writeFile(t, s.SettingsFile(), `{"clonesDir": "/mine"}`)
	if err := s.Guard(); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "config")
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if got := s.Settings().ClonesDir; got != "" {
		t.Fatalf("read clonesDir %q through a folder others can write", got)
	}
	var fe *FolderError
	if err := s.Check(); !errors.As(err, &fe) || fe.Component != open || fe.Folder != "config folder" {
		t.Fatalf("Check = %v, want the config folder's parent named", err)
	}
	if !strings.Contains(s.Check().Error(), "replace gatehouse's config folder "+s.ConfigDir()+" with their own") {
		t.Fatalf("the refusal does not name the config folder: %v", s.Check())
	}

	fresh := splitStore(t, base) // serve started now
	if err := fresh.Guard(); !errors.Is(err, ErrFolderUnsafe) {
		t.Fatalf("Guard with the config folder under a world-writable folder: %v", err)
	}
	if err := CheckConfigFolder(fresh.ConfigDir()); !errors.Is(err, ErrFolderUnsafe) {
		t.Fatalf("CheckConfigFolder: %v", err)
	}
	if err := os.Remove(fresh.SettingsFile()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(fresh.Dir(), settingsFile), `{"clonesDir": "/old"}`)
	if moved, err := fresh.MoveSettings(); !errors.Is(err, ErrFolderUnsafe) || moved != nil {
		t.Fatalf("MoveSettings into a config folder others can replace: %v, %v", moved, err)
	}
	if _, err := os.Stat(fresh.SettingsFile()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a config file was written: %v", err)
	}
}

// A state folder another user could have swapped is not a source to move
// from: its clonesDir would be copied into the person's own config file
// and outlast the swap.
func TestMoveSettingsRefusesAnUnsafeStateFolder(t *testing.T) {
	base := t.TempDir()
	s := splitStore(t, base)
	writeFile(t, filepath.Join(s.Dir(), settingsFile), `{"clonesDir": "/theirs"}`)
	if err := os.Chmod(filepath.Join(base, "state"), 0o777); err != nil {
		t.Fatal(err)
	}
	if moved, err := s.MoveSettings(); !errors.Is(err, ErrFolderUnsafe) || moved != nil {
		t.Fatalf("MoveSettings from a state folder others can replace: %v, %v", moved, err)
	}
	if _, err := os.Stat(s.SettingsFile()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a config file was written: %v", err)
	}
}

// The attack, as root with a real other user: the config folder lives in
// a folder others can write; the other user renames it aside and puts
// their own in its place, with clonesDir in a folder they own. The store
// without a guard (the code before the config folder was checked) reads
// their clonesDir; a guarded store refuses it.
func TestAnotherUserSwapsTheConfigFolder(t *testing.T) {
	needRoot(t)
	fileCheckOff(t)
	base, err := os.MkdirTemp("", "gatehouse-config-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	build(t, base, []node{{path: "state", mode: 0o755}, {path: "shared", mode: 0o777}, {path: "shared/xdg", mode: 0o755}})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	open := func() *Store {
		s, err := OpenStoreWithConfig(filepath.Join(base, "state", "gatehouse"), filepath.Join(base, "shared", "xdg", "gatehouse"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	unguarded, guarded := open(), open()
	swap := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c",
		`mv "$1/xdg" "$1/xdg.old" && mkdir -p "$1/xdg/gatehouse" && printf '{"clonesDir": "/tmp/theirs"}' > "$1/xdg/gatehouse/settings.json"`,
		"sh", filepath.Join(base, "shared"))
	if out, err := swap.CombinedOutput(); err != nil {
		t.Fatalf("the other user could not swap the folder: %v %s", err, out)
	}
	if got := unguarded.Settings().ClonesDir; got != "/tmp/theirs" {
		t.Fatalf("not reproduced: the unguarded store read clonesDir %q", got)
	}
	if err := guarded.Guard(); !errors.Is(err, ErrFolderUnsafe) {
		t.Fatalf("Guard on a config folder another user swapped: %v", err)
	}
	if _, err := OpenStoreWithConfig(filepath.Join(base, "state", "gatehouse"), filepath.Join(base, "shared", "xdg", "gatehouse")); err == nil || !strings.Contains(err.Error(), "config folder "+base+"/shared/xdg/gatehouse belongs to another user") {
		t.Fatalf("opening the other user's config folder: %v", err)
	}
}
