package regress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/procgroup"
)

// Env is one run of a case: its own folder, its own HOME for git, and the
// payload that proves an exploit by creating Marker.
type Env struct {
	// Dir is the checkout gatehouse serves.
	Dir string
	// Work is the case's own folder (remotes, outside files, the marker).
	Work string
	// Marker is the file the payload creates; Payload is the payload, an
	// executable script.
	Marker, Payload string
	// Target is the checkout's target id, once served.
	Target string
	// Extra lists other folders to serve before Dir (a worktree's main
	// checkout), and Worktree says Dir is a worktree of Extra[0].
	Extra    []string
	Worktree bool

	git     string
	home    string
	err     error
	cleanup []func()
	vars    map[string]string
}

func newEnv(git, work string) (*Env, error) {
	e := &Env{Work: work, Dir: filepath.Join(work, "repo"), Marker: filepath.Join(work, "marker"), git: git,
		home: filepath.Join(work, "home"), Payload: filepath.Join(work, "payload.sh")}
	if err := os.MkdirAll(e.home, 0o755); err != nil {
		return nil, err
	}
	cfg := "[user]\n\tname = Regress\n\temail = regress@example.com\n[init]\n\tdefaultBranch = main\n"
	if err := os.WriteFile(filepath.Join(e.home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	script := "#!/bin/sh\ntouch '" + e.Marker + "'\nexit 0\n"
	if err := os.WriteFile(e.Payload, []byte(script), 0o755); err != nil {
		return nil, err
	}
	return e, nil
}

// close stops what the case started, newest first; it runs once, also when
// the case panicked.
func (e *Env) close() {
	cleanup := e.cleanup
	e.cleanup = nil
	for i := len(cleanup) - 1; i >= 0; i-- {
		cleanup[i]()
	}
}

// fail records the first error of a build; later steps do nothing.
func (e *Env) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// Fired reports whether the payload ran.
func (e *Env) Fired() bool {
	_, err := os.Stat(e.Marker)
	return err == nil
}

// gitEnv is plain git's environment: the case's HOME, no system config,
// nothing of the person running the corpus.
func (e *Env) gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+e.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
}

// Run runs plain git in dir: the reproduction step, and the builder of
// every hostile repository. It never runs for a device.
func (e *Env) Run(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.git, args...)
	cmd.Dir, cmd.Env = dir, e.gitEnv()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("git %s: blocked for 30 s", strings.Join(args, " "))
	}
	return string(out), err
}

// RunFor runs plain git in dir and gives up after d, reporting whether it
// was still running then (a FIFO makes git wait forever).
func (e *Env) RunFor(d time.Duration, dir string, args ...string) (blocked bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.git, args...)
	cmd.Dir, cmd.Env = dir, e.gitEnv()
	_ = cmd.Run()
	return ctx.Err() != nil
}

// Git runs plain git in dir as a build step.
func (e *Env) Git(dir string, args ...string) string {
	if e.err != nil {
		return ""
	}
	out, err := e.Run(dir, args...)
	if err != nil {
		e.fail(fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out))
	}
	return out
}

// Init makes Dir a repository with one commit of files.
func (e *Env) Init(files map[string]string) {
	e.InitAt(e.Dir, files)
}

// InitAt makes dir a repository with one commit of files.
func (e *Env) InitAt(dir string, files map[string]string) {
	e.Git(e.Work, "init", "-q", dir)
	if len(files) == 0 {
		files = map[string]string{"README.md": "hello\n"}
	}
	e.WriteAt(dir, files)
	e.Git(dir, "add", "-A")
	e.Git(dir, "commit", "-q", "-m", "first")
}

// Write writes files (name → content) into Dir.
func (e *Env) Write(files map[string]string) { e.WriteAt(e.Dir, files) }

// WriteAt writes files into dir, making folders.
func (e *Env) WriteAt(dir string, files map[string]string) {
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			e.fail(err)
			return
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			e.fail(err)
		}
	}
}

// Config sets local config keys (key, value, key, value...) in Dir.
func (e *Env) Config(kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		e.Git(e.Dir, "config", "--local", kv[i], kv[i+1])
	}
}

// Hook installs the payload as the named hook of the repository at dir.
func (e *Env) Hook(dir, name string) {
	p := filepath.Join(dir, ".git", "hooks", name)
	if fi, err := os.Stat(filepath.Join(dir, "hooks")); err == nil && fi.IsDir() {
		p = filepath.Join(dir, "hooks", name) // a bare repository
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.fail(err)
		return
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec '"+e.Payload+"'\n"), 0o755); err != nil {
		e.fail(err)
	}
}

// Stage changes a tracked file and stages it, ready to commit.
func (e *Env) Stage() {
	e.Write(map[string]string{"README.md": "changed\n"})
	e.Git(e.Dir, "add", "README.md")
}

// Touch changes a tracked file's content without changing its size, so
// status and add must run it through its clean filter to compare.
func (e *Env) Touch(name, sameSize string) { e.Write(map[string]string{name: sameSize}) }

// Bare makes an empty bare repository in Work and returns its path.
func (e *Env) Bare(name string) string {
	p := filepath.Join(e.Work, name)
	e.Git(e.Work, "init", "-q", "--bare", p)
	return p
}

// Daemon serves the bare repositories under base over git:// on loopback
// (pushes allowed) until the case ends, and returns the base URL.
func (e *Env) Daemon(base string) string {
	if e.err != nil {
		return ""
	}
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			e.fail(err)
			return ""
		}
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		cmd := exec.Command(e.git, "daemon", "--reuseaddr", "--listen=127.0.0.1", "--port="+port,
			"--export-all", "--enable=receive-pack", "--base-path="+base, base)
		cmd.Env = e.gitEnv()
		// Its whole process group is stopped with the case: killing the git
		// wrapper alone left git-daemon serving the deleted folder
		// (internal/procgroup, TestKillingTheWrapperLeavesGitDaemon).
		g, err := procgroup.Start(cmd)
		if err != nil {
			e.fail(err)
			return ""
		}
		e.cleanup = append(e.cleanup, func() { _ = g.Stop() })
		for range 100 {
			if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				c.Close()
				return "git://127.0.0.1:" + port + "/"
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	e.fail(fmt.Errorf("git daemon did not start"))
	return ""
}

// Unauthorized serves HTTP on loopback, answering every request 401, until
// the case ends, and returns its URL: git then asks its credential helper
// or askpass program for a password.
func (e *Env) Unauthorized() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.fail(err)
		return ""
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="regress"`)
		w.WriteHeader(http.StatusUnauthorized)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	e.cleanup = append(e.cleanup, func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

// GlobalConfig appends text to the case's own global git config: the
// user's config, which gatehouse trusts.
func (e *Env) GlobalConfig(text string) {
	f, err := os.OpenFile(filepath.Join(e.home, ".gitconfig"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		e.fail(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		e.fail(err)
	}
}

// Head is HEAD's commit id in Dir.
func (e *Env) Head() string { return strings.TrimSpace(e.Git(e.Dir, "rev-parse", "HEAD")) }

// Link makes a hard link at name (in Dir) to the file at target.
func (e *Env) Link(target, name string) {
	if err := os.Link(target, filepath.Join(e.Dir, name)); err != nil {
		e.fail(err)
	}
}

// Symlink makes a symlink at name (in Dir) pointing to target.
func (e *Env) Symlink(target, name string) {
	if err := os.Symlink(target, filepath.Join(e.Dir, name)); err != nil {
		e.fail(err)
	}
}

// Outside writes a file beside the checkout, in Work, and returns its path.
func (e *Env) Outside(name, content string) string {
	p := filepath.Join(e.Work, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.fail(err)
	}
	return p
}

// ReadPlain reads a file of the checkout the way a tool without gatehouse
// would (following links), giving up after a second ("blocked").
func (e *Env) ReadPlain(name string) string {
	done := make(chan string, 1)
	go func() {
		data, err := os.ReadFile(filepath.Join(e.Dir, name))
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- string(data)
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(time.Second):
		// Let the stuck reader go: open the FIFO for writing and close it.
		go func() {
			if f, err := os.OpenFile(filepath.Join(e.Dir, name), os.O_WRONLY, 0); err == nil {
				f.Close()
			}
		}()
		return "blocked"
	}
}

// Var remembers a value a case's params use; Get reads it back.
func (e *Env) Var(name, value string) {
	if e.vars == nil {
		e.vars = map[string]string{}
	}
	e.vars[name] = value
}

// Get reads a value remembered by Var.
func (e *Env) Get(name string) string { return e.vars[name] }
