// Package trust says who is calling and what the person at the computer has
// allowed them.
//
// Two separate questions decide what a call may do:
//
//   - Trust: is this the person at the computer (Desktop), or a device
//     (Phone)? For a device it also carries the host's "Full access for remote
//     devices" switch as it was when the request was admitted. A phone with the
//     switch on is treated exactly as the desktop for git and files (its own
//     hooks and config run as the user chose); a phone with the switch off
//     gets the closed gate.
//   - Grant: which methods a device may call at all (view < control < full),
//     and whether secret files are hidden from it (below full).
//
// The zero Trust is a phone with the switch off, the most closed caller, so a
// Trust that was never set fails closed. The zero Grant is None, which allows
// nothing.
//
// The package also owns the state folder (see Store): the switch, the grants
// bound to each device's id and key fingerprint, and the list of served
// checkouts. It decides nothing about git or files itself.
package trust

import (
	"fmt"
)

// Trust is who is calling: the desktop, or a phone with the host's switch as
// it was when its request was admitted.
type Trust struct {
	desktop    bool
	fullAccess bool
}

// Desktop is the person at the computer: the local command line, or
// `gatehouse do --as desktop`.
func Desktop() Trust { return Trust{desktop: true} }

// Phone is a paired device. fullAccess is the host's "Full access for remote
// devices" switch, read once when the request was admitted and carried with
// it, so a switch flipped while the request waits changes nothing for it.
func Phone(fullAccess bool) Trust { return Trust{fullAccess: fullAccess} }

// IsDesktop reports whether the caller is the person at the computer.
func (t Trust) IsDesktop() bool { return t.desktop }

// FullAccess reports whether a phone's switch was on. The desktop needs no
// switch and reports true.
func (t Trust) FullAccess() bool { return t.desktop || t.fullAccess }

// Closed reports whether this caller gets the closed gate: a phone whose
// switch was off. Everything the repository's own content names (hooks,
// filters, drivers, transports) must be switched off or refused for it.
func (t Trust) Closed() bool { return !t.desktop && !t.fullAccess }

func (t Trust) String() string {
	switch {
	case t.desktop:
		return "desktop"
	case t.fullAccess:
		return "phone (full access)"
	}
	return "phone"
}

// Grant is what the person at the computer allowed a device: view < control <
// full. The zero Grant, None, allows nothing.
type Grant uint8

const (
	// None: no grant; the device gets nothing but a refusal.
	None Grant = iota
	// View: read-only methods; secret files hidden.
	View
	// Control: small changes (stage, discard); secret files hidden.
	Control
	// Full: every method; secret files shown.
	Full
)

// ParseGrant reads "view", "control" or "full".
func ParseGrant(s string) (Grant, error) {
	switch s {
	case "view":
		return View, nil
	case "control":
		return Control, nil
	case "full":
		return Full, nil
	}
	return None, fmt.Errorf("unknown grant %q (want view, control or full)", s)
}

func (g Grant) String() string {
	switch g {
	case View:
		return "view"
	case Control:
		return "control"
	case Full:
		return "full"
	}
	return "none"
}

// Allows reports whether a device with grant g may call a method whose scope
// is need. None never allows anything, even a None scope.
func (g Grant) Allows(need Grant) bool {
	return g != None && g <= Full && g >= need
}

// SeesSecrets reports whether secret files are shown to this grant: only
// full. Below full, reads of secret files are refused and diffs leave them
// out.
func (g Grant) SeesSecrets() bool { return g == Full }

// MarshalText writes the grant's name.
func (g Grant) MarshalText() ([]byte, error) {
	if g > Full {
		return nil, fmt.Errorf("invalid grant %d", uint8(g))
	}
	return []byte(g.String()), nil
}

// UnmarshalText reads a grant's name; anything unknown is an error.
func (g *Grant) UnmarshalText(b []byte) error {
	v, err := ParseGrant(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}
