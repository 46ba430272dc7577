package web

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/fakegithub"
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

// node runs node and fails the test with everything it printed. A script
// that hangs is stopped shortly before the test's own deadline (a minute,
// or a tenth of the time left if that is less): the deadline's panic would
// end the run without its output, so without the step it hung at. node
// gets SIGTERM first (lib.mjs then says so and exits, which stops the
// browser and serve), and is killed if it is still there 10 s later.
func node(t *testing.T, env []string, args ...string) {
	t.Helper()
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-min(time.Minute, time.Until(deadline)/10)))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() != nil {
		t.Fatalf("node %v: stopped before the test's deadline: %v\n%s", args, err, out)
	}
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

// The page's Node tests (web/test/): it seals and agrees keys as the host
// does (the Go test vectors, through @noble/ciphers and @noble/curves), its
// modules form no cycle and a screen draws outside Chromium.
func TestPageSealsAsTheHostDoes(t *testing.T) {
	needNode(t, false)
	node(t, nil, "--test", "test/")
}

// The page in headless Chromium against a real gatehouse serve and a real
// repository (web/e2e/run.mjs). Screenshots go to $GATEHOUSE_ARTIFACTS
// (default: a temporary folder).
func TestPageInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	artifacts := inBrowser(t, bin, "e2e/run.mjs", pageRepo(t), nil)
	shots, _ := filepath.Glob(filepath.Join(artifacts, "*.png"))
	if len(shots) < 13*6 {
		t.Fatalf("screenshots: %v", shots)
	}
}

// The page explains itself (web/e2e/newcomer.mjs): the screen in the address
// across a reload, back and forward; drawn icons; a refusal beside its
// button; a disabled control with its reason; the GitHub tab without a GitHub
// remote; search modes and marked hits.
func TestNewcomerPageInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	inBrowser(t, bin, "e2e/newcomer.mjs", pageRepo(t), nil)
}

// The changes screen's answers to a newcomer (web/e2e/changes.mjs): the
// Secret mark at every grant and a question before a secret is staged or
// committed, sixty new files as one folder row, and actions disabled with
// their reason where they are.
func TestChangesPageInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	inBrowser(t, bin, "e2e/changes.mjs", pageRepo(t), nil)
}

// The conflicts screen (web/e2e/conflicts.mjs): a merge git stopped on two
// files, resolved region by region and whole from the page and committed,
// checked with git; a stopped rebase aborted.
func TestConflictsPageInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	inBrowser(t, bin, "e2e/conflicts.mjs", conflictRepo(t), nil)
}

// conflictRepo is a checkout whose merge of branch side stopped on f.txt
// (two regions, and a change of side's between them) and g.txt, with a
// branch topic whose rebase onto main will stop on h.txt.
func conflictRepo(t *testing.T) string {
	t.Helper()
	dir := gittest.Init(t, map[string]string{"f.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "g.txt": "g\n", "h.txt": "h\n"})
	commit := func(files map[string]string, msg string) {
		gittest.Write(t, dir, files)
		gittest.Git(t, dir, "commit", "-qam", msg)
	}
	gittest.Git(t, dir, "branch", "topic")
	gittest.Git(t, dir, "checkout", "-q", "-b", "side")
	commit(map[string]string{"f.txt": "1\n2t\n3\n4\n5t\n6\n7\n8t\n9\n", "g.txt": "g side\n"}, "side")
	gittest.Git(t, dir, "checkout", "-q", "topic")
	commit(map[string]string{"h.txt": "h topic\n"}, "topic")
	gittest.Git(t, dir, "checkout", "-q", "main")
	commit(map[string]string{"f.txt": "1\n2o\n3\n4\n5\n6\n7\n8o\n9\n", "g.txt": "g main\n", "h.txt": "h main\n"}, "main")
	gittest.Git(t, dir, "!", "merge", "-q", "side")
	return dir
}

// Stash, amend and revert from the page (web/e2e/everyday.mjs): stash with
// a message, the list, a stash's diff, pop; amend an unpushed commit and
// find Amend disabled with its reason once it is pushed; revert a commit.
// Each result is checked with git.
func TestEverydayPageInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	inBrowser(t, bin, "e2e/everyday.mjs", everydayRepo(t), nil)
}

// everydayRepo: "Second commit" changes a.txt, "Add b" (HEAD) is not on
// origin/main (which stays at the second commit; origin's URL is never
// reached), a.txt changed and new.txt new in the work tree.
func everydayRepo(t *testing.T) string {
	t.Helper()
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	gittest.Write(t, repo, map[string]string{"a.txt": "a\nsecond\n"})
	gittest.Git(t, repo, "commit", "-qam", "Second commit")
	gittest.Git(t, repo, "remote", "add", "origin", "https://example.invalid/repo.git")
	gittest.Git(t, repo, "update-ref", "refs/remotes/origin/main", "HEAD")
	gittest.Write(t, repo, map[string]string{"b.txt": "b\n"})
	gittest.Git(t, repo, "add", "b.txt")
	gittest.Git(t, repo, "commit", "-qm", "Add b")
	gittest.Write(t, repo, map[string]string{"a.txt": "a\nsecond\nchanged on the phone\n", "new.txt": "new\n"})
	return repo
}

// The squatter in a real browser (web/e2e/squatter.mjs): what it reads from
// the page's origin while serve is stopped opens nothing after serve starts
// again, and the real phone comes back by its own code.
func TestSquatterInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"README.md": "Hello\n", ".env": "TOKEN=1\n"})
	inBrowser(t, bin, "e2e/squatter.mjs", repo, nil)
}

// One page, two computers (web/e2e/computers.mjs): the page served by one
// serve pairs with a second serve on another port through its link,
// switches between them, commits on the second, and the second refuses a
// third origin with the first's device.
func TestComputersInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"README.md": "Hello\n"})
	inBrowser(t, bin, "e2e/computers.mjs", repo, nil)
}

// The page over HTTPS (web/e2e/https.mjs), with a certificate for
// gatehouse.test as serve gets one for a Tailscale name.
func TestHTTPSPageInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"README.md": "Hello\n"})
	cert, key := testCert(t, "gatehouse.test")
	inBrowser(t, bin, "e2e/https.mjs", repo, []string{"CERT=" + cert, "KEY=" + key})
}

// testCert writes a self-signed certificate for name and its key.
func testCert(t *testing.T, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// The page's GitHub screens (web/e2e/github.mjs): serve's gh is the real
// one, pointed at a local fake of GitHub as an Enterprise host, and the
// checkout's origin is octo/hello there.
func TestGitHubPageInChromium(t *testing.T) {
	bin := browserTest(t)
	if _, err := exec.LookPath("gh"); err != nil {
		if os.Getenv("GATEHOUSE_GH_TESTS") == "1" {
			t.Fatal("the GitHub page test needs gh (Debian's gh package)")
		}
		t.Skip("needs gh; make test installs it")
	}
	gittest.Home(t, "")
	fake := fakegithub.Start(t)
	var env []string
	for _, kv := range fake.Env(t.TempDir()) {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GH_") || k == "SSL_CERT_FILE" {
			env = append(env, kv)
		}
	}
	repo := gittest.Init(t, map[string]string{"README.md": "Hello\n"})
	gittest.Git(t, repo, "remote", "add", "origin", "https://"+fake.Host+"/octo/hello.git")
	inBrowser(t, bin, "e2e/github.mjs", repo, env)
	fake.Mu.Lock()
	defer fake.Mu.Unlock()
	pull, issue := fake.Data.Pulls["octo/hello"][0], fake.Data.Issues["octo/hello"][0]
	if pull.MergedWith != "merge" || issue.Comments[len(issue.Comments)-1].Body != "Here is the log, from the phone." {
		t.Fatalf("GitHub after the page: pull 3 merged with %q, last comment %+v", pull.MergedWith, issue.Comments[len(issue.Comments)-1])
	}
}

// The branches and tags screens (web/e2e/branches.mjs) against real git
// and a bare remote served over git:// on loopback: create, switch, rename,
// delete (an unmerged branch only after the count is said and confirmed),
// switch to a remote branch, and tags made and one pushed, each checked
// with git in the checkout and in the remote.
func TestBranchesPageInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	base := t.TempDir()
	url := gittest.Daemon(t, base)
	bare := filepath.Join(base, "remote.git")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, "", "init", "-q", "--bare", bare)
	gittest.Git(t, repo, "remote", "add", "origin", url+"remote.git")
	gittest.Git(t, repo, "push", "-q", "origin", "main")
	gittest.Git(t, repo, "branch", "-q", "--set-upstream-to=origin/main")
	gittest.Git(t, repo, "switch", "-q", "-c", "remote-only")
	gittest.Write(t, repo, map[string]string{"r.txt": "r\n"})
	gittest.Git(t, repo, "add", "r.txt")
	gittest.Git(t, repo, "commit", "-qm", "On the remote only")
	gittest.Git(t, repo, "push", "-q", "origin", "remote-only")
	// A long name, as a bot's branches have: the Start from list must not
	// push the screen sideways (the photographs fail on that).
	gittest.Git(t, repo, "push", "-q", "origin", "remote-only:dependabot/npm_and_yarn/web/some-long-package-name-4.17.21-and-its-peers")
	gittest.Git(t, repo, "switch", "-q", "-c", "feature", "main")
	for _, c := range []string{"one", "two"} {
		gittest.Write(t, repo, map[string]string{c + ".txt": c + "\n"})
		gittest.Git(t, repo, "add", c+".txt")
		gittest.Git(t, repo, "commit", "-qm", "Feature, "+c)
	}
	gittest.Git(t, repo, "switch", "-q", "main")
	gittest.Git(t, repo, "branch", "-q", "-D", "remote-only")
	gittest.Git(t, repo, "tag", "v0.1")
	inBrowser(t, bin, "e2e/branches.mjs", repo, []string{"BARE=" + bare})
}

// Pull requests end to end from the page (web/e2e/pulls.mjs) through the
// real gh and the fake GitHub: a pull request opened from the checkout's
// branch (pushed to a local folder, checked with git), approved and
// squash-merged (checked in the fake), a 400-file pull request's files
// paged, a failed run's log.
func TestPullsPageInChromium(t *testing.T) {
	bin := browserTest(t)
	if _, err := exec.LookPath("gh"); err != nil {
		if os.Getenv("GATEHOUSE_GH_TESTS") == "1" {
			t.Fatal("the pull request page test needs gh (Debian's gh package)")
		}
		t.Skip("needs gh; make test installs it")
	}
	gittest.Home(t, "")
	fake := fakegithub.Start(t)
	var env []string
	for _, kv := range fake.Env(t.TempDir()) {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GH_") || k == "SSL_CERT_FILE" {
			env = append(env, kv)
		}
	}
	var diff strings.Builder
	for i := range 400 {
		fmt.Fprintf(&diff, "diff --git a/src/f%03d.go b/src/f%03d.go\nindex 1..2 100644\n--- a/src/f%03d.go\n+++ b/src/f%03d.go\n@@ -1 +1,2 @@\n-old\n+new %d\n+more\n", i, i, i, i, i)
	}
	diff.WriteString("diff --git a/.env b/.env\nnew file mode 100644\n--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+API_KEY=marker-value\n")
	fake.Mu.Lock()
	fake.Data.Pulls["octo/hello"][1].Diff = diff.String()
	fake.Mu.Unlock()
	remote := t.TempDir()
	gittest.Git(t, remote, "init", "-q", "--bare")
	repo := gittest.Init(t, map[string]string{"README.md": "Hello\n"})
	origin := "https://" + fake.Host + "/octo/hello.git"
	gittest.Git(t, repo, "remote", "add", "origin", origin)
	gittest.Git(t, repo, "config", "url."+remote+".pushInsteadOf", origin)
	gittest.Git(t, repo, "switch", "-q", "-c", "feature")
	gittest.Write(t, repo, map[string]string{"feature.txt": "feature\n"})
	gittest.Git(t, repo, "add", "feature.txt")
	gittest.Git(t, repo, "commit", "-qm", "Add feature.txt")
	inBrowser(t, bin, "e2e/pulls.mjs", repo, env)
	if got, want := gittest.Git(t, remote, "rev-parse", "feature"), gittest.Git(t, repo, "rev-parse", "HEAD"); got != want {
		t.Fatalf("the pushed branch is at %s, the checkout at %s", got, want)
	}
	fake.Mu.Lock()
	defer fake.Mu.Unlock()
	var opened *fakegithub.Pull
	for i, p := range fake.Data.Pulls["octo/hello"] {
		if p.Number == 6 {
			opened = &fake.Data.Pulls["octo/hello"][i]
		}
	}
	if opened == nil || opened.Title != "Add the feature from the phone" || opened.HeadRefName != "feature" || opened.BaseRefName != "main" ||
		opened.MergedWith != "squash" || opened.ReviewDecision != "APPROVED" || !strings.Contains(opened.Body, "It adds feature.txt.") {
		t.Fatalf("GitHub after the page: %+v", opened)
	}
}

// browserTest skips without the browser's pieces and builds gatehouse
// (before gittest.Home moves HOME, which would move the build cache).
func browserTest(t *testing.T) string {
	t.Helper()
	needNode(t, true)
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	bin := filepath.Join(t.TempDir(), "gatehouse")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/gatehouse").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// inBrowser runs one browser script against a serve of repo and returns
// the screenshots' folder.
func inBrowser(t *testing.T, bin, script, repo string, env []string) string {
	t.Helper()
	artifacts := os.Getenv("GATEHOUSE_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	node(t, append([]string{"GATEHOUSE=" + bin, "REPO=" + repo, "STATE=" + state, "ARTIFACTS=" + artifacts, "CHROMIUM=/usr/bin/chromium"}, env...), script)
	t.Logf("screenshots in %s", artifacts)
	return artifacts
}

// pageRepo is the checkout the browser test drives: history with a
// message body, a file changed in two hunks, a folder two deep with a long
// file (a search hit far down), a picture, an ignored node_modules, an
// untracked .env, and enough new files that the changes list scrolls.
func pageRepo(t *testing.T) string {
	t.Helper()
	var long, hunks strings.Builder
	for i := 1; i <= 120; i++ {
		if i == 90 {
			fmt.Fprintf(&long, "const needle = %d; // the line a search finds\n", i)
			continue
		}
		fmt.Fprintf(&long, "export const line%d = %d;\n", i, i)
	}
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&hunks, "line %d\n", i)
	}
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n", "README.md": "# repo\n", ".gitignore": "node_modules/\n",
		"src/lib/util.js": long.String(), "two-hunks.txt": hunks.String()})
	writePNG(t, filepath.Join(repo, "src", "logo.png"))
	gittest.Git(t, repo, "add", "src/logo.png")
	gittest.Git(t, repo, "commit", "-qm", "Add the logo")
	gittest.Write(t, repo, map[string]string{"a.txt": "a\nsecond\n"})
	gittest.Git(t, repo, "commit", "-qam", "Second commit\n\nIts body says why, over\ntwo lines.")
	gittest.Write(t, repo, map[string]string{
		"a.txt":                            "a\nsecond\nchanged from the phone test\n",
		"two-hunks.txt":                    strings.Replace(strings.Replace(hunks.String(), "line 2\n", "line 2 edited at the top\n", 1), "line 38\n", "line 38 edited at the end\n", 1),
		".env":                             "TOKEN=secret\n",
		"node_modules/dep/util-ignored.js": "ignored\n",
	})
	for i := range 60 {
		gittest.Write(t, repo, map[string]string{fmt.Sprintf("many/new-%02d.txt", i): "new\n"})
	}
	return repo
}

// writePNG writes a 96x64 picture with a gradient, so a thumbnail and a
// full view have something to show.
func writePNG(t *testing.T, path string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 96, 64))
	for y := range 64 {
		for x := range 96 {
			img.Set(x, y, color.RGBA{uint8(x * 2), uint8(y * 3), 200, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
