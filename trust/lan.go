package trust

import (
	"errors"
	"os"
	"time"
)

// LANState is what serve keeps of its LAN address between runs: the port
// it chose once (so a page's saved address, and with it the browser storage
// that holds its key, keeps working) and each paired device with its key,
// so a restart ends no pairing. The file is 0600 in the 0700 state folder,
// beside the relay identity's keys.
type LANState struct {
	Port    int         `json:"port,omitempty"`
	Devices []LANDevice `json:"devices"`
}

// LANDevice is one paired LAN device: its grant is bound to its key, as a
// relay device's grant is bound to its key's fingerprint.
type LANDevice struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Grant    Grant     `json:"grant"`
	Paired   time.Time `json:"paired"`
	LastSeen time.Time `json:"lastSeen"`
	Key      []byte    `json:"key"`
}

// LAN returns the kept LAN state; a missing or unreadable file reads as
// none (no device paired, any port), and LANProblem says why.
func (s *Store) LAN() LANState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return load(s.path(lanFile), &s.lan)
}

// LANProblem is why the kept LAN state read as none, or nil.
func (s *Store) LANProblem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	load(s.path(lanFile), &s.lan)
	return s.lan.problem
}

// damagedSuffix names the copy of an unreadable lan.json kept aside.
const damagedSuffix = ".damaged"

// SaveLAN replaces the kept LAN state. An unreadable file is first moved
// aside (lan.json.damaged), so what was in it is never lost by a rewrite.
func (s *Store) SaveLAN(st LANState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	load(s.path(lanFile), &s.lan)
	if s.lan.problem != nil {
		if err := os.Rename(s.path(lanFile), s.path(lanFile+damagedSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return update(s, lanFile, &s.lan, func(LANState) (LANState, error) { return st, nil })
}
