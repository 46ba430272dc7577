package trust

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

func TestZeroTrustIsTheClosedPhone(t *testing.T) {
	var zero Trust
	if !zero.Closed() || zero.IsDesktop() || zero.FullAccess() {
		t.Fatalf("zero Trust = %v, want a closed phone", zero)
	}
	if Desktop().Closed() || !Desktop().FullAccess() {
		t.Fatal("desktop must be open")
	}
	if Phone(true).Closed() || !Phone(true).FullAccess() || Phone(true).IsDesktop() {
		t.Fatal("phone with the switch on is open but not the desktop")
	}
	if !Phone(false).Closed() {
		t.Fatal("phone with the switch off must be closed")
	}
}

func TestGrantOrder(t *testing.T) {
	cases := []struct {
		have, need Grant
		ok         bool
	}{
		{None, None, false}, {None, View, false},
		{View, View, true}, {View, Control, false}, {View, Full, false},
		{Control, View, true}, {Control, Control, true}, {Control, Full, false},
		{Full, View, true}, {Full, Full, true},
		{Grant(9), View, false},
	}
	for _, c := range cases {
		if got := c.have.Allows(c.need); got != c.ok {
			t.Errorf("%v.Allows(%v) = %v, want %v", c.have, c.need, got, c.ok)
		}
	}
	if View.SeesSecrets() || Control.SeesSecrets() || !Full.SeesSecrets() {
		t.Fatal("only full sees secrets")
	}
	for _, s := range []string{"view", "control", "full"} {
		g, err := ParseGrant(s)
		if err != nil || g.String() != s {
			t.Errorf("ParseGrant(%q) = %v, %v", s, g, err)
		}
	}
	if _, err := ParseGrant("admin"); err == nil {
		t.Fatal("unknown grant parsed")
	}
}

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := OpenStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const fpA = "00112233445566778899aabbccddeeff"
const fpB = "ffeeddccbbaa99887766554433221100"

func TestMissingFilesMeanEmpty(t *testing.T) {
	s := newStore(t)
	if s.FullAccess() || len(s.Grants()) != 0 || len(s.Targets()) != 0 {
		t.Fatal("a fresh store is not empty")
	}
	if p := s.Problems(); len(p) != 0 {
		t.Fatalf("missing files reported as problems: %v", p)
	}
}

func TestCorruptOrHostileFilesMeanEmpty(t *testing.T) {
	for name, setup := range map[string]func(dir string) error{
		"garbage": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, grantsFile), []byte("{not json"), 0o600)
		},
		"unknown grant": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, grantsFile),
				[]byte(`{"d1":{"grant":"root","fingerprint":"`+fpA+`"}}`), 0o600)
		},
		"symlink": func(dir string) error {
			other := filepath.Join(dir, "elsewhere.json")
			if err := os.WriteFile(other, []byte(`{"d1":{"grant":"full","fingerprint":"`+fpA+`"}}`), 0o600); err != nil {
				return err
			}
			return os.Symlink(other, filepath.Join(dir, grantsFile))
		},
		"fifo": func(dir string) error {
			return mkfifo(filepath.Join(dir, grantsFile))
		},
		"folder": func(dir string) error {
			return os.Mkdir(filepath.Join(dir, grantsFile), 0o700)
		},
		"huge": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, grantsFile), make([]byte, maxStateFile+1), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			if err := setup(s.Dir()); err != nil {
				t.Fatal(err)
			}
			if g := s.GrantFor("d1", fpA); g != None {
				t.Fatalf("grant from a %s file = %v, want none", name, g)
			}
			if len(s.Problems()) != 1 {
				t.Fatalf("problems = %v, want the grants file", s.Problems())
			}
		})
	}
}

func TestSwitchPersistsWithPrivateModes(t *testing.T) {
	s := newStore(t)
	if err := s.SetFullAccess(true); err != nil {
		t.Fatal(err)
	}
	if !s.FullAccess() {
		t.Fatal("switch not on")
	}
	again, err := OpenStore(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if !again.FullAccess() {
		t.Fatal("switch not persisted")
	}
	st, err := os.Stat(filepath.Join(s.Dir(), settingsFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("settings mode %v, want 0600", st.Mode().Perm())
	}
	dst, _ := os.Stat(s.Dir())
	if dst.Mode().Perm() != 0o700 {
		t.Fatalf("state folder mode %v, want 0700", dst.Mode().Perm())
	}
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestOpenStoreNarrowsAWideFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(dir); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v, want 0700", st.Mode().Perm())
	}
}

// The attack a grant kept by device id alone leaves open: the relay (or
// whoever controls the account) presents a granted device's id with a new key
// (docs/relay.md, "What the relay can and cannot do"). Without the binding
// the grant would follow the id.
func TestGrantsAreBoundToTheKey(t *testing.T) {
	s := newStore(t)
	if err := s.SetGrant("phone-1", DeviceGrant{Grant: Full, Fingerprint: fpA, Name: "Pixel"}); err != nil {
		t.Fatal(err)
	}
	// Without the binding: the grant is found by id alone.
	if s.Grants()["phone-1"].Grant != Full {
		t.Fatal("grant not stored")
	}
	// With it: the same id with another key has nothing.
	if g := s.GrantFor("phone-1", fpB); g != None {
		t.Fatalf("grant for a new key = %v, want none", g)
	}
	if g := s.GrantFor("phone-1", fpA); g != Full {
		t.Fatalf("grant for the granted key = %v, want full", g)
	}
	if g := s.GrantFor("phone-1", ""); g != None {
		t.Fatalf("grant for an empty fingerprint = %v", g)
	}
	if err := s.Revoke("phone-1"); err != nil {
		t.Fatal(err)
	}
	if g := s.GrantFor("phone-1", fpA); g != None {
		t.Fatalf("grant after revoke = %v", g)
	}
}

func TestSetGrantValidates(t *testing.T) {
	s := newStore(t)
	for _, c := range []struct {
		id string
		g  DeviceGrant
	}{
		// An id's shape is the transport's (relay.ValidDeviceID); the store
		// refuses only an empty one.
		{"", DeviceGrant{Grant: View, Fingerprint: fpA}},
		{"ok", DeviceGrant{Grant: View, Fingerprint: "xyz"}},
		{"ok", DeviceGrant{Grant: None, Fingerprint: fpA}},
	} {
		if err := s.SetGrant(c.id, c.g); err == nil {
			t.Errorf("SetGrant(%q, %+v) accepted", c.id, c.g)
		}
	}
}

// A running serve reads through its own Store; `gatehouse devices` writes
// through another. The change must show at once.
func TestAnotherWriterIsSeenAtOnce(t *testing.T) {
	serve := newStore(t)
	if serve.FullAccess() {
		t.Fatal("on before set")
	}
	cli, err := OpenStore(serve.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false, true} {
		if err := cli.SetFullAccess(on); err != nil {
			t.Fatal(err)
		}
		if serve.FullAccess() != on {
			t.Fatalf("serve did not see the switch set to %v", on)
		}
	}
}

func TestConcurrentWritersLoseNothing(t *testing.T) {
	s := newStore(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other, err := OpenStore(s.Dir()) // separate caches, shared lock file
			if err != nil {
				t.Error(err)
				return
			}
			if err := other.SetGrant(fmt.Sprintf("dev-%d", i), DeviceGrant{Grant: View, Fingerprint: fpA}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(s.Grants()); n != 20 {
		t.Fatalf("%d grants survived, want 20", n)
	}
}

func TestTargets(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	a, err := s.AddTarget(dir, Served, "")
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	b, err := s.AddTarget(link, Served, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID || len(s.Targets()) != 1 {
		t.Fatalf("the same folder through a symlink got a second target: %v %v", a, b)
	}
	canon, _ := Canonical(dir)
	if a.ID != TargetID(canon) || !strings.HasPrefix(a.ID, "t") {
		t.Fatalf("id %q is not derived from the canonical path", a.ID)
	}
	if err := s.RemoveTarget(a.ID); err != nil {
		t.Fatal(err)
	}
	if len(s.Targets()) != 0 {
		t.Fatal("target not removed")
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("GATEHOUSE_HOME", "/tmp/gh-test-home")
	if d, _ := DefaultDir(); d != "/tmp/gh-test-home" {
		t.Fatalf("GATEHOUSE_HOME ignored: %s", d)
	}
	t.Setenv("GATEHOUSE_HOME", "")
	t.Setenv("XDG_STATE_HOME", "/tmp/xdg")
	if d, _ := DefaultDir(); d != "/tmp/xdg/gatehouse" {
		t.Fatalf("XDG_STATE_HOME ignored: %s", d)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/tmp/h")
	if d, _ := DefaultDir(); d != "/tmp/h/.local/state/gatehouse" {
		t.Fatalf("fallback = %s", d)
	}
}

func mkfifo(path string) error {
	return unix.Mkfifo(path, 0o600)
}
