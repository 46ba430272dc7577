package web

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// The page's tests need Node.js, the locked npm packages (npm ci in web/)
// and Debian's chromium. 'make test' installs them and sets
// GATEHOUSE_BROWSER_TESTS=1, which turns a missing piece into a failure;
// a plain 'go test ./...' elsewhere skips them and says why.
func needNode(t *testing.T, chromium bool) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node"
	} else if _, err := os.Stat("node_modules/@noble/ciphers"); err != nil {
		missing = "web/node_modules (run npm ci in web/)"
	} else if _, err := os.Stat("/usr/bin/chromium"); chromium && err != nil {
		missing = "/usr/bin/chromium (Debian's chromium package)"
	}
	if missing == "" {
		return
	}
	if os.Getenv("GATEHOUSE_BROWSER_TESTS") == "1" {
		t.Fatalf("the page's tests need %s", missing)
	}
	t.Skipf("needs %s; make test installs it", missing)
}

func node(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %v: %v\n%s", args, err, out)
	}
	t.Logf("node %v:\n%s", args, out)
}

// The committed dist/ is what a fresh build from the lockfile makes, so the
// binary embeds exactly the reviewed source.
func TestDistIsAFreshBuild(t *testing.T) {
	needNode(t, false)
	out := t.TempDir()
	node(t, nil, "build.mjs", out)
	err := fs.WalkDir(os.DirFS(out), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fresh, _ := os.ReadFile(filepath.Join(out, p))
		committed, err := fs.ReadFile(Page(), p)
		if err != nil || !bytes.Equal(fresh, committed) {
			t.Errorf("dist/%s differs from a fresh build; run npm run build in web/ and commit dist/", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The page seals as the host does: the Go test vectors, through
// @noble/ciphers.
func TestPageSealsAsTheHostDoes(t *testing.T) {
	needNode(t, false)
	node(t, nil, "--test", "test/")
}

// The page in headless Chromium against a real gatehouse serve and a real
// repository (web/e2e/run.mjs). Screenshots go to $GATEHOUSE_ARTIFACTS
// (default: a temporary folder).
func TestPageInChromium(t *testing.T) {
	needNode(t, true)
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	// Built before gittest.Home moves HOME, which would move the build cache.
	bin := filepath.Join(t.TempDir(), "gatehouse")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/gatehouse").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n", ".env": "TOKEN=secret\n", "README.md": "# repo\n"})
	gittest.Write(t, repo, map[string]string{"a.txt": "a\nchanged from the phone test\n"})
	artifacts := os.Getenv("GATEHOUSE_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	node(t, []string{"GATEHOUSE=" + bin, "REPO=" + repo, "STATE=" + state, "ARTIFACTS=" + artifacts, "CHROMIUM=/usr/bin/chromium"}, "e2e/run.mjs")
	shots, _ := filepath.Glob(filepath.Join(artifacts, "*.png"))
	if len(shots) < 6 {
		t.Fatalf("screenshots: %v", shots)
	}
	t.Logf("screenshots in %s", artifacts)
}
