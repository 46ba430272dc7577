package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// TargetKind says how a folder became a target.
type TargetKind string

const (
	// Served: a folder the person at the computer chose (serve PATH...).
	Served TargetKind = "served"
	// Worktree: a linked worktree gatehouse made for a device.
	Worktree TargetKind = "worktree"
	// Clone: a repository a device had cloned (projects.clone), served
	// from then on.
	Clone TargetKind = "clone"
)

// Target is a folder devices may address by its id.
type Target struct {
	ID string `json:"id"`
	// Path is the canonical absolute path. It stays on this computer: replies
	// to devices name a target by its id and folder name only.
	Path  string     `json:"path"`
	Kind  TargetKind `json:"kind"`
	Added time.Time  `json:"added"`
	// Parent is the id of the checkout a worktree was made from.
	Parent string `json:"parent,omitempty"`
}

// TargetID is the stable id of the folder at canonical path: the same for
// serve and do, and the same across restarts.
func TargetID(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return "t" + hex.EncodeToString(sum[:8])
}

// Canonical returns the absolute path of dir with every symlink resolved.
func Canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Targets returns the target list.
func (s *Store) Targets() []Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(load(s.path(targetsFile), &s.targets))
}

// AddTarget records dir as a target of the given kind and returns it. Adding
// a folder that is already a target returns the existing entry.
func (s *Store) AddTarget(dir string, kind TargetKind, parent string) (Target, error) {
	if kind != Served && kind != Worktree && kind != Clone {
		return Target{}, fmt.Errorf("invalid target kind %q", kind)
	}
	canon, err := Canonical(dir)
	if err != nil {
		return Target{}, fmt.Errorf("target: %w", err)
	}
	t := Target{ID: TargetID(canon), Path: canon, Kind: kind, Parent: parent,
		Added: time.Now().UTC().Truncate(time.Second)}
	s.mu.Lock()
	defer s.mu.Unlock()
	err = update(s, targetsFile, &s.targets, func(cur []Target) ([]Target, error) {
		for _, old := range cur {
			if old.ID == t.ID {
				t = old
				return cur, nil
			}
		}
		return append(cur, t), nil
	})
	return t, err
}

// RemoveTarget forgets the target with this id.
func (s *Store) RemoveTarget(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return update(s, targetsFile, &s.targets, func(cur []Target) ([]Target, error) {
		return slices.DeleteFunc(cur, func(t Target) bool { return t.ID == id }), nil
	})
}
