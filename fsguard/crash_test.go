package fsguard

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
)

const (
	crashOld = "the old text, several lines long\nso a torn write would show\n"
	crashNew = "THE NEW TEXT, ALSO LONG\nAND DIFFERENT IN EVERY BYTE\n!!!!!\n"
)

// TestWriteCrashHelper is the child process of TestWriteSurvivesACrash: it
// writes and kills itself (SIGKILL, no cleanup runs) after the named step.
func TestWriteCrashHelper(t *testing.T) {
	dir, at := os.Getenv("GATEHOUSE_CRASH_DIR"), os.Getenv("GATEHOUSE_CRASH_STEP")
	if dir == "" {
		t.Skip("run by TestWriteSurvivesACrash")
	}
	r, err := OpenRoot(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	setWriteHookForTest(func(step string) {
		if step == at {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	})
	_, err = r.Write(trust.Full, "f.txt", crashNew, hashOf([]byte(crashOld)))
	t.Fatalf("the write returned (%v) instead of dying at %q", err, at)
}

func TestWriteSurvivesACrash(t *testing.T) {
	for _, c := range []struct {
		step string
		want string
	}{
		{stepCreated, crashOld},
		{stepWritten, crashOld},
		{stepSynced, crashOld},
		{stepRenamed, crashNew},
		{stepDirSync, crashNew},
	} {
		t.Run(strings.ReplaceAll(c.step, " ", "-"), func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(f, []byte(crashOld), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestWriteCrashHelper$")
			cmd.Env = append(os.Environ(), "GATEHOUSE_CRASH_DIR="+dir, "GATEHOUSE_CRASH_STEP="+c.step)
			out, err := cmd.CombinedOutput()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed at %q: %v\n%s", c.step, err, out)
			}
			got, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("after a crash at %q the file holds %q, want %q", c.step, got, c.want)
			}
		})
	}
}
