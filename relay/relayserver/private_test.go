package relayserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// Found by the red team: in a data folder other users can write (mode
// 1777), another user planted token-secret before the relay's first start;
// the relay kept it, and tokens minted with it were accepted. And a secret
// left readable by others was never made private again.
func TestDataFilesOfAnotherUserAreRefused(t *testing.T) {
	testenv.Require(t, "root", os.Geteuid() == 0, "needs root to give a file to another user")
	open, err := os.MkdirTemp("", "gatehouse-open-data-") // in /tmp, which every user can reach
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	if err := os.Chmod(open, 0o1777); err != nil {
		t.Fatal(err)
	}
	// The attack's first step works: another user can write there.
	planted := filepath.Join(open, "token-secret")
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c",
		"printf AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA > "+planted)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("not reproduced: another user could not plant the secret: %v %s", err, out)
	}
	if err := CheckDataDir(open); err == nil || !strings.Contains(err.Error(), "other users can write") {
		t.Fatalf("a folder others can write: %v", err)
	}
	if _, err := LoadSecret(planted); err == nil {
		t.Fatal("a secret another user planted was loaded")
	}
	db := filepath.Join(open, "relay.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(db, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(db); err == nil {
		t.Fatal("a database another user owns was opened")
	}
	// A secret of this user's that others could read.
	mine := t.TempDir()
	if _, err := LoadSecret(filepath.Join(mine, "token-secret")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(mine, "token-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSecret(filepath.Join(mine, "token-secret")); err == nil || !strings.Contains(err.Error(), "Remove it") {
		t.Fatalf("a secret others could read: %v", err)
	}
	if err := CheckDataDir(mine); err != nil {
		t.Fatalf("a private folder: %v", err)
	}
}
