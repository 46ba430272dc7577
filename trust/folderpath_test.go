package trust

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"golang.org/x/sys/unix"
)

// otherUID is the other local user of these tests (nobody).
const otherUID = 65534

// needRoot skips a test that gives files to another user, which needs
// root, or fails it when the run requires root (GATEHOUSE_REQUIRE=root,
// internal/testenv; make test sets it).
func needRoot(t *testing.T) {
	t.Helper()
	testenv.Require(t, "root", os.Geteuid() == 0, "needs root to give files to another user")
}

// node is one entry of a test tree under base: a folder with its mode
// (os.ModeSticky for the sticky bit), a symlink to link ("$B" is base), or
// a file; owned by the other user when other.
type node struct {
	path  string
	mode  os.FileMode
	link  string
	file  bool
	other bool
}

func build(t *testing.T, base string, tree []node) {
	t.Helper()
	for _, n := range tree {
		p := filepath.Join(base, n.path)
		var err error
		switch {
		case n.link != "":
			err = os.Symlink(strings.ReplaceAll(n.link, "$B", base), p)
		case n.file:
			err = os.WriteFile(p, nil, 0o600)
		default:
			if err = os.Mkdir(p, 0o700); err == nil {
				err = os.Chmod(p, n.mode)
			}
		}
		if err == nil && n.other {
			err = os.Lchown(p, otherUID, otherUID)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

const sticky = os.ModeSticky

// The state folder's path, from /, as real trees: bad is the component
// CheckFolder must name ("" when the folder is fine); fails is a refusal
// that is not about another user (a loop, a missing folder, a file).
type folderCase struct {
	name  string
	tree  []node
	dir   string
	bad   string
	fails error
	root  bool // gives a file to another user
}

var folderCases = []folderCase{
	{name: "private chain", tree: []node{{path: "a", mode: 0o755}, {path: "a/state", mode: 0o700}}, dir: "a/state"},
	{name: "own folder in a sticky folder", tree: []node{{path: "tmp", mode: sticky | 0o777}, {path: "tmp/me", mode: 0o700}, {path: "tmp/me/state", mode: 0o700}}, dir: "tmp/me/state"},
	{name: "state folder in a sticky folder", tree: []node{{path: "tmp", mode: sticky | 0o777}, {path: "tmp/state", mode: 0o700}}, dir: "tmp/state"},
	{name: "world-writable folder", tree: []node{{path: "shared", mode: 0o777}, {path: "shared/xdg", mode: 0o755}, {path: "shared/xdg/state", mode: 0o700}}, dir: "shared/xdg/state", bad: "shared"},
	{name: "group-writable folder", tree: []node{{path: "team", mode: 0o775}, {path: "team/state", mode: 0o700}}, dir: "team/state", bad: "team"},
	{name: "sticky state folder", tree: []node{{path: "state", mode: sticky | 0o777}}, dir: "state", bad: "state"},
	{name: "world-writable folder above a missing one", tree: []node{{path: "shared", mode: 0o777}}, dir: "shared/xdg/state", bad: "shared"},
	{name: "missing", tree: []node{{path: "a", mode: 0o755}}, dir: "a/state", fails: fs.ErrNotExist},
	{name: "own symlink to a private chain", tree: []node{{path: "real", mode: 0o755}, {path: "real/state", mode: 0o700}, {path: "link", link: "$B/real"}}, dir: "link/state"},
	{name: "relative symlink with ..", tree: []node{{path: "a", mode: 0o755}, {path: "b", mode: 0o755}, {path: "b/state", mode: 0o700}, {path: "a/up", link: "../b"}}, dir: "a/up/state"},
	{name: "symlink to the state folder", tree: []node{{path: "real", mode: 0o700}, {path: "state", link: "real"}}, dir: "state"},
	{name: "symlink into a world-writable folder", tree: []node{{path: "shared", mode: 0o777}, {path: "shared/state", mode: 0o700}, {path: "link", link: "shared"}}, dir: "link/state", bad: "shared"},
	{name: "symlink in a world-writable folder", tree: []node{{path: "shared", mode: 0o777}, {path: "real", mode: 0o755}, {path: "real/state", mode: 0o700}, {path: "shared/link", link: "$B/real"}}, dir: "shared/link/state", bad: "shared"},
	{name: "symlink loop", tree: []node{{path: "loop", link: "loop"}}, dir: "loop/state", fails: unix.ELOOP},
	{name: "file on the way", tree: []node{{path: "f", file: true}}, dir: "f/state", fails: unix.ENOTDIR},
	{name: "folder of another user", root: true, tree: []node{{path: "theirs", mode: 0o755, other: true}, {path: "theirs/state", mode: 0o700}}, dir: "theirs/state", bad: "theirs"},
	{name: "another user's folder in a sticky folder", root: true, tree: []node{{path: "tmp", mode: sticky | 0o777}, {path: "tmp/me", mode: 0o755, other: true}, {path: "tmp/me/state", mode: 0o700}}, dir: "tmp/me/state", bad: "tmp/me"},
	{name: "sticky folder of another user", root: true, tree: []node{{path: "tmp", mode: sticky | 0o777, other: true}, {path: "tmp/me", mode: 0o700}, {path: "tmp/me/state", mode: 0o700}}, dir: "tmp/me/state", bad: "tmp"},
	{name: "another user's symlink in a sticky folder", root: true, tree: []node{{path: "tmp", mode: sticky | 0o777}, {path: "real", mode: 0o755}, {path: "real/state", mode: 0o700}, {path: "tmp/link", link: "$B/real", other: true}}, dir: "tmp/link/state", bad: "tmp/link"},
	{name: "another user's symlink in a private folder", root: true, tree: []node{{path: "a", mode: 0o755}, {path: "real", mode: 0o755}, {path: "real/state", mode: 0o700}, {path: "a/link", link: "$B/real", other: true}}, dir: "a/link/state", bad: "a/link"},
	{name: "state folder of another user", root: true, tree: []node{{path: "state", mode: 0o700, other: true}}, dir: "state", bad: "state"},
}

// The config folder is checked by the same rule (CheckConfigFolder): the
// same table runs against both.
func TestCheckFolder(t *testing.T) {
	checks := []struct {
		name  string
		check func(string) error
	}{{"state", CheckFolder}, {"config", CheckConfigFolder}}
	for _, check := range checks {
		for _, c := range folderCases {
			t.Run(check.name+"/"+c.name, func(t *testing.T) { runFolderCase(t, c, check.check) })
		}
	}
}

func runFolderCase(t *testing.T, c folderCase, check func(string) error) {
	if c.root {
		needRoot(t)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	build(t, base, c.tree)
	err = check(filepath.Join(base, c.dir))
	var fe *FolderError
	switch {
	case c.fails != nil:
		if errors.As(err, &fe) || !errors.Is(err, c.fails) {
			t.Fatalf("err = %v, want a refusal like %v", err, c.fails)
		}
	case c.bad == "":
		if err != nil {
			t.Fatalf("a folder only root and this user can change was refused: %v", err)
		}
	default:
		if !errors.As(err, &fe) || !errors.Is(err, ErrFolderUnsafe) || fe.Component != filepath.Join(base, c.bad) {
			t.Fatalf("err = %v, want one naming %s", err, c.bad)
		}
		if !strings.Contains(err.Error(), "set GATEHOUSE_HOME to a folder only you can change") {
			t.Fatalf("the refusal does not say what to do: %v", err)
		}
	}
}

// sharedTree makes base/shared (mode) holding an XDG_STATE_HOME, xdg, and
// opens the state folder in it, xdg/gatehouse. base is in /tmp and
// reachable by the other user.
func sharedTree(t *testing.T, mode os.FileMode) (shared string, s *Store) {
	t.Helper()
	base, err := os.MkdirTemp("", "gatehouse-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	shared = filepath.Join(base, "shared")
	build(t, base, []node{{path: "shared", mode: mode}, {path: "shared/xdg", mode: 0o755}})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err = OpenStore(filepath.Join(shared, "xdg", "gatehouse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetFullAccess(false); err != nil {
		t.Fatal(err)
	}
	return shared, s
}

// swapAsOtherUser is the attack, run as the other user: rename the folder
// above the state folder aside and make one in its place whose state folder
// has Full access on.
func swapAsOtherUser(t *testing.T, shared string) {
	t.Helper()
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c",
		`mv "$1/xdg" "$1/xdg.old" && mkdir -p "$1/xdg/gatehouse" && printf '{"fullAccess": true}' > "$1/xdg/gatehouse/settings.json"`,
		"sh", shared)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the other user could not swap the folder: %v %s", err, out)
	}
}

// Found by a black-box attack: XDG_STATE_HOME in a folder other users can
// write. Another user renamed the folder above the state folder aside and
// made their own in its place with Full access on; serve read it from then
// on. A guarded Store refuses such a folder before using it.
func TestAnotherUserSwapsTheStateFolder(t *testing.T) {
	needRoot(t)
	fileCheckOff(t) // the folder's wall alone: the file's own check would stop the attack too
	shared, old := sharedTree(t, 0o777)
	swapAsOtherUser(t, shared)
	if !old.FullAccess() {
		t.Fatal("not reproduced: the store did not read the other user's switch")
	}

	shared, s := sharedTree(t, 0o777)
	err := s.Guard()
	var fe *FolderError
	if !errors.As(err, &fe) || fe.Component != shared {
		t.Fatalf("Guard on a state folder under a world-writable folder: %v", err)
	}
	want := shared + " is writable by other users (mode 777), so another user could replace gatehouse's state folder " + s.Dir() + " with their own; set GATEHOUSE_HOME to a folder only you can change"
	if err.Error() != want {
		t.Fatalf("the refusal reads\n%s\nwant\n%s", err, want)
	}
}

// The chain was private when serve started and was opened later: the
// other user swaps the folder, an unguarded store (the old code) reads
// their switch, and the guarded one refuses to read or write.
func TestGuardedStoreStopsUsingASwappedFolder(t *testing.T) {
	needRoot(t)
	fileCheckOff(t)
	shared, s := sharedTree(t, 0o755)
	if err := s.Guard(); err != nil {
		t.Fatal(err)
	}
	old, err := OpenStore(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil { // opened up, say to share it with a colleague
		t.Fatal(err)
	}
	swapAsOtherUser(t, shared)
	if !old.FullAccess() {
		t.Fatal("not reproduced: the unguarded store did not read the other user's switch")
	}
	if s.FullAccess() {
		t.Fatal("the guarded store read the switch from the other user's folder")
	}
	var fe *FolderError
	if err := s.Check(); !errors.As(err, &fe) || fe.Component != shared {
		t.Fatalf("Check = %v, want the shared folder named", err)
	}
	if err := s.SetGrant("phone", DeviceGrant{Grant: Full, Fingerprint: fpA}); !errors.Is(err, ErrFolderUnsafe) {
		t.Fatalf("a grant was written to the other user's folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), grantsFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("grants.json in the other user's folder: %v", err)
	}
}

// Without another user: a folder on the way made writable by others is
// enough for the guarded store to stop, and a check once failed stays
// failed when the mode is put back.
func TestGuardRefusesOnceTheChainOpens(t *testing.T) {
	base := t.TempDir()
	s, err := OpenStore(filepath.Join(base, "xdg", "gatehouse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetFullAccess(true); err != nil {
		t.Fatal(err)
	}
	if err := s.Guard(); err != nil {
		t.Fatal(err)
	}
	if !s.FullAccess() || s.Check() != nil {
		t.Fatal("a private chain was refused")
	}
	xdg := filepath.Join(base, "xdg")
	if err := os.Chmod(xdg, 0o777); err != nil {
		t.Fatal(err)
	}
	if s.FullAccess() {
		t.Fatal("read the switch through a folder others can write")
	}
	if err := os.Chmod(xdg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); !errors.Is(err, ErrFolderUnsafe) || s.FullAccess() {
		t.Fatalf("the failed check did not stay failed: %v", err)
	}
	if err := s.SetFullAccess(false); !errors.Is(err, ErrFolderUnsafe) {
		t.Fatalf("a write after a failed check: %v", err)
	}
}

// The path names another folder than the one guarded (moved aside, a
// new one made): the guarded store stops, though the new folder is the
// user's own.
func TestGuardSeesTheFolderReplaced(t *testing.T) {
	s := newStore(t)
	if err := s.Guard(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(s.Dir(), s.Dir()+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(s.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), settingsFile), []byte(`{"fullAccess": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if s.FullAccess() {
		t.Fatal("read the switch from the folder put in place of the guarded one")
	}
	if err := s.Check(); !errors.Is(err, ErrFolderReplaced) {
		t.Fatalf("Check = %v, want ErrFolderReplaced", err)
	}
}

// Two serves on one folder: the second finds the lock held and changes
// nothing; the lock is free again once released.
func TestServeLock(t *testing.T) {
	s := newStore(t)
	release, err := s.LockServe()
	if err != nil {
		t.Fatal(err)
	}
	other, err := OpenStore(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.LockServe(); !errors.Is(err, ErrServeLocked) {
		t.Fatalf("a second serve lock: %v, want ErrServeLocked", err)
	}
	release()
	release() // twice is harmless
	again, err := other.LockServe()
	if err != nil {
		t.Fatalf("the lock was not freed: %v", err)
	}
	again()
}
