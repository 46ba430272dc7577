package trust

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// LANState is what serve keeps of its LAN address between runs: the port
// it chose once (so a page's saved address keeps working) and each paired
// device with the secrets its pairing agreed, so a restart ends no
// pairing. The file is 0600 in the 0700 state folder, beside the relay
// identity's keys.
type LANState struct {
	Port    int         `json:"port,omitempty"`
	Devices []LANDevice `json:"devices"`
}

// LANDevice is one paired LAN device. Its grant is bound to the secrets its
// pairing agreed (Fingerprint names them), as a relay device's grant is
// bound to its key's fingerprint.
type LANDevice struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Grant       Grant     `json:"grant"`
	Kind        string    `json:"kind,omitempty"`   // "page" or "cli": what paired
	Origin      string    `json:"origin,omitempty"` // the page's address it paired at
	Page        string    `json:"page,omitempty"`   // another computer's page it paired from, reached from there only
	Paired      time.Time `json:"paired"`
	LastSeen    time.Time `json:"lastSeen"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	// Stored is the secret the device keeps (a page in its browser
	// storage); StoredRun names the serve run it is good for, since a page's
	// storage can be read by whatever serves its address while serve is
	// stopped.
	Stored    []byte `json:"stored,omitempty"`
	StoredRun string `json:"storedRun,omitempty"`
	// Spent are the stored secrets it had before, newest first: a page that
	// still holds one is asked to reconnect, not forgotten.
	Spent [][]byte `json:"spent,omitempty"`
	// Tickets resume a device after a restart: each session leaves one,
	// which the page holds in memory only.
	Tickets []LANTicket `json:"tickets,omitempty"`
	// Key is the device key of gatehouse before keys were agreed: a device
	// that has only this must pair again.
	Key []byte `json:"key,omitempty"`
}

// LANTicket is one session's ticket.
type LANTicket struct {
	ID     string    `json:"id"`
	Secret []byte    `json:"secret"`
	Used   time.Time `json:"used"`
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
	return s.UpdateLAN(func(cur *LANState) error {
		*cur = st
		return nil
	})
}

// UpdateLAN changes the kept LAN state by change, applied to a fresh read
// made under the folder's lock, so two gatehouse commands at once (a revoke
// beside a grant, while no serve runs) each change the other's result and
// never write back an older copy: with a read before the lock, a revoke
// reported done came back in 1 run of 8 beside a grant. When change fails
// nothing is written. An unreadable file is moved aside first, as SaveLAN
// does.
func (s *Store) UpdateLAN(change func(*LANState) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	load(s.path(lanFile), &s.lan)
	if s.lan.problem != nil {
		if err := os.Rename(s.path(lanFile), s.path(lanFile+damagedSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return update(s, lanFile, &s.lan, func(cur LANState) (LANState, error) {
		err := change(&cur)
		return cur, err
	})
}

// callPairingsLock serializes gatehouse call's own LAN pairings file
// between processes: each call opens a session and saves the ticket it
// gave, and two calls at once must not write back each other's older one.
const callPairingsLock = "lan-pairings.lock"

// LockCallPairings takes the lock on gatehouse call's LAN pairings (flock,
// waiting for another call to finish with them).
func (s *Store) LockCallPairings() (release func(), err error) {
	fd, err := unix.Open(s.path(callPairingsLock), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lan pairings lock: %w", err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("lan pairings lock: %w", err)
	}
	return func() { _ = unix.Close(fd) }, nil
}
