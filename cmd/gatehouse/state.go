package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/rpc/lan"
	"github.com/gatehouse/gatehouse/trust"
)

// stateCheckEvery is how often a running serve checks its state folder
// again, for what it reads outside the Store (the relay identity, the
// request log, the control socket): the Store checks before each read.
const stateCheckEvery = 2 * time.Second

// serveState is the state folder as serve holds it: guarded (trust.Store's
// Guard), locked for the LAN address when serve has one, and checked again
// every stateCheckEvery.
type serveState struct {
	store   *trust.Store
	release func() // the serve lock, or nothing
	quit    chan struct{}
	once    sync.Once
	stopped atomic.Bool // the check stopped serve
}

// openServeState opens the state folder for serve, refusing, before
// anything is opened or written: a folder that another user could replace
// (trust.CheckFolder), and, when serve is to have the LAN address
// (withLAN), a folder in which a serve already answers on the control
// socket. A second serve that went on would find the kept port taken, move
// it and save the new one in lan.json, so every paired page would lose the
// computer at the next restart. It prints why and returns the exit code
// when it refuses.
func openServeState(e *env, withLAN bool) (*serveState, int) {
	dir, err := trust.DefaultDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return nil, exitUsage
	}
	// A folder that does not exist yet holds no serve; OpenStore makes it
	// and Guard checks it then.
	if err := trust.CheckFolder(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return nil, exitUsage
	}
	// The config folder names where a device's clone is written: the same
	// check, when it is another folder.
	if configDir, err := trust.DefaultConfigDir(); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return nil, exitUsage
	} else if configDir != dir {
		if err := trust.CheckConfigFolder(configDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
			return nil, exitUsage
		}
	}
	if withLAN {
		if msg := runningServe(dir); msg != "" {
			fmt.Fprintf(e.stderr, "gatehouse serve: %s\n", msg)
			return nil, exitFound
		}
	}
	store, code := openState(e)
	if store == nil {
		return nil, code
	}
	if err := store.Guard(); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return nil, exitUsage
	}
	s := &serveState{store: store, release: func() {}, quit: make(chan struct{})}
	if withLAN {
		release, err := store.LockServe()
		if errors.Is(err, trust.ErrServeLocked) {
			// Another serve got past runningServe first and has no control socket yet.
			fmt.Fprintf(e.stderr, "gatehouse serve: another gatehouse serve is running or starting in this state folder (%s); stop it first\n", dir)
			return nil, exitFound
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
			return nil, exitUsage
		}
		s.release = release
	}
	return s, exitOK
}

// moveSettings moves the person's settings from the state folder's
// settings.json to the config folder's (trust.Store.MoveSettings) and says
// so; it happens once, since the state file no longer holds them after.
// When they cannot be moved they are still read where they are.
func moveSettings(e *env, store *trust.Store) {
	moved, err := store.MoveSettings()
	state := filepath.Join(store.Dir(), "settings.json")
	switch {
	case err != nil:
		fmt.Fprintf(e.stderr, "gatehouse: settings stay in %s: %v\n", state, err)
	case len(moved) > 0:
		fmt.Fprintf(e.stderr, "gatehouse: moved %s from %s to %s\n", strings.Join(moved, ", "), state, store.SettingsFile())
	}
}

// runningServe says where the serve running in state folder dir answers,
// or "" when none does.
func runningServe(dir string) string {
	ans, err := lan.Control(dir, lan.ControlRequest{Op: "status"})
	switch {
	case errors.Is(err, lan.ErrNoServe):
		return ""
	case errors.Is(err, lan.ErrServeSilent):
		return fmt.Sprintf("a gatehouse serve holds the control socket of this state folder (%s) but does not answer; stop it first", dir)
	case err != nil || ans.Status == nil || ans.Status.URL == "":
		return fmt.Sprintf("gatehouse serve is already running in this state folder (%s); stop it first", dir)
	}
	return fmt.Sprintf("gatehouse serve is already running in this state folder (%s) at %s; stop it first", dir, display.Text(ans.Status.URL))
}

// watch checks the folder every stateCheckEvery until close; when a check
// fails it says why and calls stop, once.
func (s *serveState) watch(e *env, stop func()) {
	go func() {
		t := time.NewTicker(stateCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
			if err := s.store.Check(); err != nil {
				fmt.Fprintf(e.stderr, "gatehouse serve: stopping: %v\n", err)
				s.stopped.Store(true)
				stop()
				return
			}
		}
	}()
}

// close stops watching and frees the serve lock. It returns code, or
// exitFound when the check stopped serve.
func (s *serveState) close(code int) int {
	s.once.Do(func() {
		close(s.quit)
		s.release()
	})
	if s.stopped.Load() {
		return exitFound
	}
	return code
}

// stopBySignal stops serve as Ctrl-C or a service manager does, through
// its signal handler: its pages are told and its control socket removed.
// (serveLAN's loop listens for nothing else. A serve still starting, before
// its handler is set, ends at once, which stops it too.)
func stopBySignal() { _ = syscall.Kill(os.Getpid(), syscall.SIGTERM) }
