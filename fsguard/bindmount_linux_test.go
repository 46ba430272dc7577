package fsguard

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/trust"
)

// The same folder under a second path (a bind mount; on macOS a firmlink)
// is the same folder. Served through a bind mount, a home folder kept in git
// was not "home" to the path comparisons, so a control phone discarded the
// state folder's settings.json back to a committed copy and turned Full
// access on; a bind mount of a folder holding GATEHOUSE_HOME served its
// lan.json. The root is compared with home and gatehouse's folders by
// identity too.
func TestABindMountOfHomeOrTheStateFolderIsRefused(t *testing.T) {
	testenv.Require(t, "root", os.Geteuid() == 0, "needs root to bind-mount a folder")
	base := t.TempDir()
	home := filepath.Join(base, "home")
	state := filepath.Join(home, ".local", "state", "gatehouse")
	other := filepath.Join(base, "other")
	otherState := filepath.Join(other, ".gh")
	for _, d := range []string{state, filepath.Join(state, "host"), otherState} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	bind := func(src string) string {
		dst, err := os.MkdirTemp(base, "bind-")
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "--bind", src, dst).CombinedOutput(); err != nil {
			t.Fatalf("mount --bind %s: %v %s", src, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("umount", dst).Run() })
		return dst
	}
	cases := []struct {
		what, dir string
		opts      Options
		want      error
	}{
		{"home through a bind mount", bind(home), Options{Home: home, StateDir: state}, ErrHomeRoot},
		{"a folder holding GATEHOUSE_HOME through a bind mount", bind(other), Options{Home: home, StateDir: otherState}, ErrAppDataRoot},
		{"a folder inside the state folder through a bind mount", bind(filepath.Join(state, "host")), Options{Home: home, StateDir: state}, ErrAppDataRoot},
	}
	for _, c := range cases {
		byPathOnlyForTest = true
		r, err := OpenRoot(c.dir, c.opts)
		byPathOnlyForTest = false
		if err != nil {
			t.Fatal(err)
		}
		before := r.AllowedFor(trust.Control)
		r.Close()
		if before != nil {
			t.Fatalf("%s: compared by path it was refused already (%v): this case shows nothing", c.what, before)
		}
		r, err = OpenRoot(c.dir, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.AllowedFor(trust.Control); !errors.Is(err, c.want) {
			t.Errorf("%s, at control: %v, want %v", c.what, err, c.want)
		}
		if err := r.AllowedFor(trust.Full); err != nil {
			t.Errorf("%s, at full: %v", c.what, err)
		}
		r.Close()
	}
}
