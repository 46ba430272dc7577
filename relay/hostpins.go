package relay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/trust"
)

// A device pins the key of each host it calls (issue 12, item 1): the relay
// chooses which key presence shows for a device id, so a relay operator, or
// a device of the account that removed the host and signed in again under
// its id, could otherwise answer in its place and read every request. The
// first key seen for a host is kept (trust on first use, shown to the
// person to compare with what the host printed), or the one the person
// gave with --host-fingerprint; a host that later shows another key is
// refused before anything is sealed to it.
//
// The pins live next to the identity that calls (client/host-pins.json,
// 0600, written atomically), keyed by relay, account and host id: an
// account on another relay is another account.

const pinsFile = "host-pins.json"

// HostKeyError: the host shows a key other than the one pinned (or given).
type HostKeyError struct {
	Host   string // the host's device id
	Pinned string // the fingerprint this device expects
	Shown  string // the fingerprint presence shows now
	Given  bool   // Pinned came from --host-fingerprint, not an earlier call
}

func (e *HostKeyError) Error() string { return "relay: host key changed: " + e.Sentence() }

// Sentence says what happened and how to go on once the person checked
// the new key at the computer.
func (e *HostKeyError) Sentence() string {
	if e.Given {
		return fmt.Sprintf("The computer %s shows key fingerprint %s, not %s as given: nothing was sent. "+
			"Check the fingerprint at that computer ('gatehouse doctor' prints it there).", e.Host, e.Shown, e.Pinned)
	}
	return fmt.Sprintf("The computer %s shows key fingerprint %s, but this device pinned %s for it: nothing was sent. "+
		"Someone may be answering in its place. If its key did change, check %s at that computer "+
		"('gatehouse doctor' prints it there) and call again with --host-fingerprint %s.",
		e.Host, e.Shown, e.Pinned, e.Shown, e.Shown)
}

var fingerprintShape = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidFingerprint: 32 lower-case hex digits, as trust.Fingerprint writes.
func ValidFingerprint(fp string) bool { return fingerprintShape.MatchString(fp) }

// pinScope names a host on one relay account.
func pinScope(p Profile, hostID string) string {
	return strings.Join([]string{p.URL, p.Account.ID, hostID}, " ")
}

func (id *Identity) pins() map[string]string {
	m := map[string]string{}
	if data, err := atomicfile.ReadBounded(filepath.Join(id.dir, pinsFile), maxIDFile); err == nil {
		if json.Unmarshal(data, &m) != nil {
			return map[string]string{}
		}
	}
	return m
}

// PinnedHost is the fingerprint pinned for hostID on this identity's
// account, or "".
func (id *Identity) PinnedHost(hostID string) string {
	return id.pins()[pinScope(id.Profile(), hostID)]
}

// CheckHostKey checks the key presence shows for hostID against the pin,
// and pins it when there is none. want, when not "", is the fingerprint
// the person gave (--host-fingerprint): the key must have it, and it then
// replaces any earlier pin. It returns the key's fingerprint and whether
// this was the first contact (nothing pinned, nothing given); a mismatch is
// a *HostKeyError and changes nothing.
func (id *Identity) CheckHostKey(hostID string, key []byte, want string) (fp string, first bool, err error) {
	fp = trust.Fingerprint(key)
	err = id.locked(func() error {
		pins := id.pins()
		scope := pinScope(id.Profile(), hostID)
		pinned := pins[scope]
		switch {
		case want != "" && want != fp:
			return &HostKeyError{Host: hostID, Pinned: want, Shown: fp, Given: true}
		case want == "" && pinned != "" && pinned != fp:
			return &HostKeyError{Host: hostID, Pinned: pinned, Shown: fp}
		case pinned == fp:
			return nil
		}
		first = want == ""
		pins[scope] = fp
		return writeJSONFile(filepath.Join(id.dir, pinsFile), pins)
	})
	return fp, first, err
}
