package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// A device pins the key of each host it calls (docs/relay.md, "The device
// pins the computer's key"; TestDevicePinsTheHostKey in relay/link): the
// relay chooses which key presence shows for a device id, so a relay
// operator, or a device of the account that removed the host and signed in
// again under its id, could otherwise answer in its place and read every
// request. The first key seen for a host is kept (trust on first use, shown
// to the person to compare with what the host printed), or the one the person
// gave with --host-fingerprint; a host that later shows another key is
// refused before anything is sealed to it.
//
// The pins live next to the identity that calls (client/host-pins.json,
// 0600, written atomically), keyed by relay and host id. Not by account:
// the account id is the relay's own word (its sign-in answer), so a relay
// that answered a new sign-in with another account id would otherwise move
// the device to an empty set of pins and be trusted as on a first call. A
// device id is random, and a host keeps it when it changes account.

const pinsFile = "host-pins.json"

// HostKeyError: the host shows a key other than the one pinned (or given).
type HostKeyError struct {
	Host   string // the host's device id
	Pinned string // the fingerprint this device expects
	Shown  string // the fingerprint presence shows now
	Given  bool   // Pinned came from --host-fingerprint, not an earlier call
}

// ErrHostKeyChanged is what a HostKeyError matches with errors.Is: a host
// that shows a key other than the one pinned is refused before anything
// is sealed to it.
var ErrHostKeyChanged = refusal.New(refusal.Refused, "host key changed",
	"The computer shows a key other than the one this device pinned for it: nothing was sent.")

func (e *HostKeyError) Error() string { return "relay: " + e.refusal().Error() }

// Unwrap gives the refusal, so refusal.Sentence finds what the person is
// told and errors.Is matches ErrHostKeyChanged.
func (e *HostKeyError) Unwrap() error { return e.refusal() }

// refusal says what happened and how to go on once the person checked the
// new key at the computer.
func (e *HostKeyError) refusal() *refusal.Detailed {
	if e.Given {
		return refusal.Errorf(ErrHostKeyChanged, "The computer %s shows key fingerprint %s, not %s as given: nothing was sent. "+
			"Check the fingerprint at that computer ('gatehouse doctor' prints it there).", e.Host, e.Shown, e.Pinned)
	}
	return refusal.Errorf(ErrHostKeyChanged, "The computer %s shows key fingerprint %s, but this device pinned %s for it: nothing was sent. "+
		"Someone may be answering in its place. If its key did change, check %s at that computer "+
		"('gatehouse doctor' prints it there) and call again with --host-fingerprint %s.",
		e.Host, e.Shown, e.Pinned, e.Shown, e.Shown)
}

var fingerprintShape = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidFingerprint: 32 lower-case hex digits, as trust.Fingerprint writes.
func ValidFingerprint(fp string) bool { return fingerprintShape.MatchString(fp) }

// pinScope names a host on one relay.
func pinScope(p Profile, hostID string) string {
	return strings.Join([]string{p.URL, hostID}, " ")
}

// errPinsUnreadable: a pins file that exists but cannot be read is not an
// empty one; treating it as empty would trust any key as on a first call.
var errPinsUnreadable = errors.New("relay: the host pins file cannot be read; check it, or remove it to pin every host again")

func (id *Identity) pins() (map[string]string, error) {
	m := map[string]string{}
	data, err := atomicfile.ReadBounded(filepath.Join(id.dir, pinsFile), maxIDFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return m, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errPinsUnreadable, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", errPinsUnreadable, err)
	}
	return m, nil
}

// PinnedHost is the fingerprint pinned for hostID on this identity's
// relay, or "".
func (id *Identity) PinnedHost(hostID string) string {
	pins, _ := id.pins()
	return pins[pinScope(id.Profile(), hostID)]
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
		pins, err := id.pins()
		if err != nil {
			return err
		}
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
