package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// A settings file that another user may change sets nothing: left 0666 (or
// owned by another user), its fullAccess turned the switch on and its
// memory bound was used, while doctor said nothing. It reads as empty, and
// Problems says why and what to run.
func TestStateFileOtherUsersMayChangeIsNotRead(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte(`{"fullAccess":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}

	skipOwnerCheckForTest = true
	on := s.FullAccess()
	skipOwnerCheckForTest = false
	if !on {
		t.Fatal("without the check the writable file did not turn the switch on: this test shows nothing")
	}
	if err := os.Chtimes(file, time.Now(), time.Now()); err != nil { // a new read, not the cached one
		t.Fatal(err)
	}
	s2, _ := OpenStore(dir)
	if s2.FullAccess() {
		t.Fatal("a settings.json every user may write turned Full access on")
	}
	problems := s2.Problems()
	if len(problems) != 1 || !errors.Is(problems[0], ErrFileOpen) || !strings.Contains(problems[0].Error(), "chmod 600") {
		t.Fatalf("doctor's problems: %v, want one saying the file is writable by others and how to fix it", problems)
	}

	t.Run("another user's file", func(t *testing.T) {
		testenv.Require(t, "root", os.Geteuid() == 0, "only root can give a file to another user")
		if err := os.Chmod(file, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(file, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		s3, _ := OpenStore(dir)
		if s3.FullAccess() {
			t.Fatal("a settings.json owned by another user turned Full access on")
		}
		if p := s3.Problems(); len(p) != 1 || !strings.Contains(p[0].Error(), "belongs to another user") {
			t.Fatalf("doctor's problems for another user's file: %v", p)
		}
	})
}

// fileCheckOff reads state files whatever their owner and mode for the rest
// of t, so a test of the folders' wall shows it holding on its own.
func fileCheckOff(t *testing.T) {
	t.Helper()
	skipOwnerCheckForTest = true
	t.Cleanup(func() { skipOwnerCheckForTest = false })
}
