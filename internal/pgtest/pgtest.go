// Package pgtest gives tests a real PostgreSQL: Debian's own server
// binaries, a cluster made by initdb in a temporary folder, listening only
// on a unix socket in that folder, and a fresh empty database per test.
//
// A test package wires it in its TestMain, which shares one server across
// the package's tests and stops it after them (and fails the run if any
// process it started outlives them, through internal/leakcheck):
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and each test asks for its database:
//
//	url := pgtest.Start(t) // skips when PostgreSQL is not installed
//
// Without Main, Start runs a server for that one test and stops it in the
// test's cleanup (a second or two per test).
//
// PostgreSQL refuses to run as root: when the tests run as root, initdb and
// postgres run as Debian's "postgres" system user, which owns the folder.
// The server gets SIGKILL when the test binary dies (Pdeathsig), and its
// backends leave when the postmaster is gone, so a killed run leaves no
// server behind.
//
// When PostgreSQL is missing the tests that need it skip, unless
// GATEHOUSE_PG_TESTS=1 (make test), which makes that a failure.
//
// It is for tests only: fsync is off and every connection is trusted.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/gatehouse/gatehouse/internal/leakcheck"
)

// Env is the variable that turns a missing PostgreSQL into a failure.
const Env = "GATEHOUSE_PG_TESTS"

// ErrMissing: no PostgreSQL server binaries were found.
var ErrMissing = errors.New("pgtest: PostgreSQL is not installed (Debian's postgresql package)")

// binGlob is where Debian's packages put each major version's programs;
// initdb and postgres are not on PATH there.
const binGlob = "/usr/lib/postgresql/*/bin"

const (
	startTimeout = 30 * time.Second // initdb plus the first accepted connection, on a busy machine
	stopTimeout  = 10 * time.Second // a fast shutdown, before SIGKILL
)

// shared is the package's one server while Main runs; nil otherwise.
var shared struct {
	sync.Mutex
	on  bool    // Main is running: Start shares one server
	srv *server // started on first use
	err error   // why it could not start, for every later test
}

// Main runs m with one server shared by every test that calls Start,
// stops it after them, and returns the exit code (for os.Exit), failing
// the run when a process the tests started still runs after them.
func Main(m *testing.M) int {
	return leakcheck.Run(runner{m})
}

type runner struct{ m *testing.M }

func (r runner) Run() int {
	shared.Lock()
	shared.on = true
	shared.Unlock()
	code := r.m.Run()
	shared.Lock()
	defer shared.Unlock()
	if shared.srv != nil {
		if err := shared.srv.stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	return code
}

// Start returns the URL of a new, empty database that belongs to the
// calling test. It skips the test when PostgreSQL is not installed (fails
// it under GATEHOUSE_PG_TESTS=1) and fails it when the server cannot start.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := findBin()
	if err != nil {
		if os.Getenv(Env) == "1" {
			t.Fatalf("%v (%s=1 makes this a failure)", err, Env)
		}
		t.Skipf("%v; make deps installs it", err)
	}
	srv, err := serverFor(t, bin)
	if err != nil {
		t.Fatal(err)
	}
	url, err := srv.createDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// serverFor is the shared server under Main, or one for t alone.
func serverFor(t testing.TB, bin string) (*server, error) {
	shared.Lock()
	defer shared.Unlock()
	if !shared.on {
		srv, err := startServer(bin)
		if err == nil {
			t.Cleanup(func() {
				if err := srv.stop(); err != nil {
					t.Error(err)
				}
			})
		}
		return srv, err
	}
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = startServer(bin)
	}
	return shared.srv, shared.err
}

// findBin returns the newest installed major version's bin folder.
func findBin() (string, error) {
	dirs, _ := filepath.Glob(binGlob)
	var ok []string
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		return "", ErrMissing
	}
	slices.SortFunc(ok, func(a, b string) int { return majorOf(a) - majorOf(b) })
	return ok[len(ok)-1], nil
}

// majorOf is the version in /usr/lib/postgresql/<major>/bin, 0 if odd.
func majorOf(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// runAs is who runs initdb and postgres: nil for the current user, or
// Debian's postgres user when the tests run as root.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs the postgres user (Debian's postgresql package makes it): %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: postgres user: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// command builds a PostgreSQL program's command: run as cred, in dir, with
// a fixed environment (nothing of the caller's PG* variables), killed if
// the test binary dies.
func command(cred *syscall.Credential, dir, prog string, args ...string) *exec.Cmd {
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	cmd.SysProcAttr = procAttr(cred)
	return cmd
}

// tail is the end of a log, for an error that says why the server failed.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}

// waitReady pings the postgres database until it answers, the server
// exits, or the time is up.
func waitReady(db *sql.DB, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("pgtest: postgres exited while starting")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres did not answer within %v: %w", startTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
