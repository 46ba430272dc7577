package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"time"
)

// DeviceGrant is what the person at the computer gave one device, bound to
// the key the device had then.
type DeviceGrant struct {
	Grant Grant `json:"grant"`
	// Fingerprint of the device's public key when it was granted
	// (Fingerprint). A device presenting any other key has no grant.
	Fingerprint string    `json:"fingerprint"`
	Name        string    `json:"name,omitempty"`
	GrantedAt   time.Time `json:"grantedAt"`
}

// Fingerprint is the first 16 bytes of SHA-256 of a public key, in hex: what
// the person at the computer compares when granting, and what a grant is
// bound to.
func Fingerprint(publicKey []byte) string {
	sum := sha256.Sum256(publicKey)
	return hex.EncodeToString(sum[:16])
}

func validFingerprint(fp string) bool {
	if len(fp) != 32 {
		return false
	}
	_, err := hex.DecodeString(fp)
	return err == nil
}

// GrantFor returns the grant of device id presenting a key with fingerprint
// fp. It is None when the device was never granted, was revoked, or now
// presents a different key than the one it was granted with. Trusting
// whatever key the relay names would let whoever controls the account or the
// relay take over a full device's id (TestGrantsAreBoundToTheKey).
func (s *Store) GrantFor(id, fp string) Grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := load(s.path(grantsFile), &s.grants)[id]
	if !ok || g.Fingerprint != fp || !validFingerprint(fp) {
		return None
	}
	return g.Grant
}

// Grants returns a copy of every device's grant, by device id.
func (s *Store) Grants() map[string]DeviceGrant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(load(s.path(grantsFile), &s.grants))
}

// SetGrant gives device id the grant g, bound to the key fingerprint in g.
// The id's shape is the transport's to check (relay.ValidDeviceID): a grant
// is found only by an id a transport accepted.
func (s *Store) SetGrant(id string, g DeviceGrant) error {
	if id == "" {
		return errors.New("empty device id")
	}
	if !validFingerprint(g.Fingerprint) {
		return fmt.Errorf("invalid key fingerprint %q", g.Fingerprint)
	}
	if g.Grant < View || g.Grant > Full {
		return fmt.Errorf("invalid grant %v for %s", g.Grant, id)
	}
	if g.GrantedAt.IsZero() {
		g.GrantedAt = time.Now().UTC().Truncate(time.Second)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return update(s, grantsFile, &s.grants, func(cur map[string]DeviceGrant) (map[string]DeviceGrant, error) {
		if cur == nil {
			cur = map[string]DeviceGrant{}
		}
		cur[id] = g
		return cur, nil
	})
}

// Revoke removes device id's grant. Revoking a device that has none is not an
// error.
func (s *Store) Revoke(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return update(s, grantsFile, &s.grants, func(cur map[string]DeviceGrant) (map[string]DeviceGrant, error) {
		delete(cur, id)
		return cur, nil
	})
}
