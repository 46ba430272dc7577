package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// stateCheckEvery is how often a running serve checks its state folder
// again, for what it reads outside the Store (the relay identity, the
// request log, the control socket): the Store checks before each read.
const stateCheckEvery = 2 * time.Second

// serveState is the state folder as serve holds it: guarded (trust.Store's
// Guard) and checked again every stateCheckEvery.
type serveState struct {
	store   *trust.Store
	quit    chan struct{}
	once    sync.Once
	stopped atomic.Bool // the check stopped serve
}

// openServeState opens the state folder for serve, refusing, before
// anything is opened or written, a folder that another user could replace
// (trust.CheckFolder). It prints why and returns the exit code when it
// refuses.
func openServeState(e *env) (*serveState, int) {
	dir, err := trust.DefaultDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return nil, exitUsage
	}
	// A folder that does not exist yet holds nothing; OpenStore makes it
	// and Guard checks it then.
	if err := trust.CheckFolder(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return nil, exitUsage
	}
	store, code := openState(e)
	if store == nil {
		return nil, code
	}
	if err := store.Guard(); err != nil {
		fmt.Fprintf(e.stderr, "gatehouse serve: %v\n", err)
		return nil, exitUsage
	}
	return &serveState{store: store, quit: make(chan struct{})}, exitOK
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

// close stops watching. It returns code, or exitFound when the check
// stopped serve.
func (s *serveState) close(code int) int {
	s.once.Do(func() { close(s.quit) })
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
