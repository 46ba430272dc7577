package rpc

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/trust"
)

// Target is a folder devices may address by id: one the person at the
// computer chose to serve, or a worktree gatehouse made. Only these are
// targets: a linked worktree that a repository's own metadata names is never
// served on that word alone.
type Target struct {
	ID     string
	Name   string // the folder's name, safe to show a device
	Kind   trust.TargetKind
	Parent string // for a worktree, the target it was made from
	Root   *fsguard.Root
	// Repo is the git checkout, nil when the folder is not one.
	Repo *gate.Repo
}

// Targets is the set of served folders.
type Targets struct {
	mu   sync.RWMutex
	byID map[string]*Target
	opts fsguard.Options
	git  gate.Options
}

// NewTargets makes an empty set: opts place every root (home, state
// folder), and git says how to run git in each (its Served list is filled
// in from the set).
func NewTargets(opts fsguard.Options, git gate.Options) *Targets {
	return &Targets{byID: map[string]*Target{}, opts: opts, git: git}
}

// Add serves the folder dir and returns its target; adding a folder twice
// returns the first.
func (ts *Targets) Add(dir string, kind trust.TargetKind, parent string) (*Target, error) {
	canon, err := trust.Canonical(dir)
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w", dir, err)
	}
	id := trust.TargetID(canon)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.byID[id]; ok {
		return t, nil
	}
	root, err := fsguard.OpenRoot(canon, ts.opts)
	if err != nil {
		return nil, err
	}
	t := &Target{ID: id, Name: filepath.Base(canon), Kind: kind, Parent: parent, Root: root}
	gopts := ts.git
	gopts.Served = append(ts.servedLocked(), canon)
	repo, err := gate.Open(root, gopts)
	switch {
	case err == nil:
		t.Repo = repo
	case errors.Is(err, gate.ErrNotCheckout):
		// served for the file methods only
	default:
		root.Close()
		return nil, err
	}
	ts.byID[id] = t
	return t, nil
}

// GH is the gh binary the targets' checkouts run ("" is gh on PATH).
func (ts *Targets) GH() string { return ts.git.GH }

func (ts *Targets) servedLocked() []string {
	var out []string
	for _, t := range ts.byID {
		if t.Kind == trust.Served || t.Kind == trust.Clone {
			out = append(out, t.Root.Path())
		}
	}
	return out
}

// Get returns a target by id.
func (ts *Targets) Get(id string) (*Target, bool) {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	t, ok := ts.byID[id]
	return t, ok
}

// Remove stops serving a target and releases it.
func (ts *Targets) Remove(id string) {
	ts.mu.Lock()
	t, ok := ts.byID[id]
	delete(ts.byID, id)
	ts.mu.Unlock()
	if ok {
		if t.Repo != nil {
			_ = t.Repo.Close()
		}
		_ = t.Root.Close()
	}
}

// All lists the targets by name.
func (ts *Targets) All() []*Target {
	ts.mu.RLock()
	out := make([]*Target, 0, len(ts.byID))
	for _, t := range ts.byID {
		out = append(out, t)
	}
	ts.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Close releases every target.
func (ts *Targets) Close() {
	for _, t := range ts.All() {
		ts.Remove(t.ID)
	}
}
