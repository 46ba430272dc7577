package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// server is one running postmaster and the folder that holds its cluster,
// its socket and its log.
type server struct {
	dir    string // the temporary folder; removed by stop
	cmd    *exec.Cmd
	exited chan struct{} // closed once the postmaster is reaped
	admin  *sql.DB       // the postgres database, for CREATE DATABASE

	mu       sync.Mutex
	n        int // databases made so far: t_1, t_2...
	stopOnce sync.Once
	stopErr  error
}

// startServer runs initdb in a new temporary folder and starts postgres on
// a unix socket there (no TCP port: nothing else on the machine can reach
// it through the network, and nothing can collide with it).
func startServer(bin string) (*server, error) {
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	s := &server{dir: dir, exited: make(chan struct{})}
	if err := s.initdb(bin, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.run(bin, cred); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *server) initdb(bin string, cred *syscall.Credential) error {
	// trust: the socket is in a 0700 folder only this user (or root) reaches.
	cmd := command(cred, s.dir, filepath.Join(bin, "initdb"),
		"-D", filepath.Join(s.dir, "data"), "-U", "postgres", "--auth=trust",
		"--no-locale", "-E", "UTF8", "--no-sync")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

// run starts the postmaster and waits until it accepts a connection.
func (s *server) run(bin string, cred *syscall.Credential) error {
	logPath := filepath.Join(s.dir, "postgres.log")
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer log.Close()
	s.cmd = command(cred, s.dir, filepath.Join(bin, "postgres"),
		"-D", filepath.Join(s.dir, "data"),
		"-k", s.dir, "-c", "listen_addresses=", "-p", "5432",
		// A test cluster: losing it in a crash is fine, waiting for disks is not.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		close(s.exited)
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	go func() {
		_ = s.cmd.Wait() // being stopped is how it ends
		close(s.exited)
	}()
	if s.admin, err = sql.Open("pgx", s.url("postgres")); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := waitReady(s.admin, s.exited); err != nil {
		return fmt.Errorf("%w\n%s", err, tail(logPath))
	}
	return nil
}

// url is a database's URL on this server's socket.
func (s *server) url(database string) string {
	q := url.Values{"host": {s.dir}, "port": {"5432"}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + database + "?" + q.Encode()
}

// createDatabase makes the next empty database and returns its URL.
func (s *server) createDatabase() (string, error) {
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("t_%d", s.n)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.url(name), nil
}

// stop asks for a fast shutdown (SIGINT: roll back open transactions,
// close sessions, checkpoint), then kills the whole group if it is still
// there after stopTimeout, and removes the folder.
func (s *server) stop() error {
	s.stopOnce.Do(func() {
		if s.admin != nil {
			s.admin.Close()
		}
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-s.exited:
			case <-time.After(stopTimeout):
				s.stopErr = fmt.Errorf("pgtest: postgres did not stop within %v; killed", stopTimeout)
			}
			// The group id stays ours while any member is left, so this
			// reaches only what the postmaster forked, or nothing.
			if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				s.stopErr = errors.Join(s.stopErr, fmt.Errorf("pgtest: kill postgres: %w", err))
			}
			<-s.exited
		}
		if err := os.RemoveAll(s.dir); err != nil {
			s.stopErr = errors.Join(s.stopErr, fmt.Errorf("pgtest: %w", err))
		}
	})
	return s.stopErr
}
