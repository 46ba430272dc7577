package rpc

import (
	"github.com/gatehouse/gatehouse/internal/refusal"
)

// Code says what kind of failure a response reports, so a device can decide
// what to do without reading the sentence.
type Code string

const (
	CodeNotRun        Code = "NOT_RUN"        // it never ran: safe to retry
	CodeAccess        Code = "ACCESS"         // the device's grant is too low
	CodeSwitch        Code = "SWITCH"         // needs Full access for remote devices
	CodeRefused       Code = "REFUSED"        // a policy gate said no
	CodeConflict      Code = "CONFLICT"       // the thing changed since it was read
	CodeBusy          Code = "BUSY"           // something else holds it; try again soon
	CodeBadParams     Code = "BAD_PARAMS"     // the request itself is wrong
	CodeUnknownMethod Code = "UNKNOWN_METHOD" // no such method here
	CodeInternal      Code = "INTERNAL"       // a failure with no sentence of its own
)

// codeFor is the one mapping from a refusal's Kind to the code a response
// carries. A NotFound is BAD_PARAMS on the wire: the device named it.
func codeFor(k refusal.Kind) Code {
	switch k {
	case refusal.BadParams, refusal.NotFound:
		return CodeBadParams
	case refusal.Refused:
		return CodeRefused
	case refusal.Conflict:
		return CodeConflict
	case refusal.Busy:
		return CodeBusy
	case refusal.Retry:
		return CodeNotRun
	case refusal.Access:
		return CodeAccess
	case refusal.Switch:
		return CodeSwitch
	case refusal.UnknownMethod:
		return CodeUnknownMethod
	}
	return CodeInternal
}

// kindOf reads codeFor backwards, for a code a host sent; a code codeFor
// never gives (from a newer host) is Internal.
func kindOf(c Code) refusal.Kind {
	for _, k := range refusal.Kinds() {
		if codeFor(k) == c {
			return k
		}
	}
	return refusal.Internal
}

// The dispatcher's refusals. Method handlers return the refusals of the
// package that owns the rule (fsguard, gate); these are for what the
// dispatcher itself decides.
var (
	ErrUnknownMethod = refusal.New(refusal.UnknownMethod, "unknown method", "Unknown method.")
	ErrNoGrant       = refusal.New(refusal.Access, "no grant", "This device is not allowed on this computer. Allow it there first.")
	ErrNotRun        = refusal.New(refusal.Retry, "waited too long", "This request waited too long on the computer and did not run. Try again.")
	ErrStale         = refusal.New(refusal.Retry, "stale or repeated request", "This request was stale or repeated, so it did not run. Check this device's clock.")
	ErrBusy          = refusal.New(refusal.Busy, "too many requests", "Too many requests at once. Try again in a moment.")
	ErrBadParams     = refusal.New(refusal.BadParams, "bad params", "This request's parameters are not valid.")
	// ErrTooLarge is INTERNAL on the wire but has its own sentence.
	ErrTooLarge    = refusal.New(refusal.Internal, "answer too large", "The answer was too large to send. Ask for less at a time.")
	ErrNoTarget    = refusal.New(refusal.BadParams, "no such target", "This project is not served here.")
	ErrNotCheckout = refusal.New(refusal.Refused, "not a checkout", "This folder is not a git checkout.")
	ErrNotInBatch  = refusal.New(refusal.BadParams, "not batchable", "Only quick read-only methods can be batched.")
	ErrOnceRunning = refusal.New(refusal.Busy, "once-method running", "This is already running. Wait for it to finish.")
)

// errAccess and errSwitchOff are what accessError and switchError match
// with errors.Is; their sentences name the grant or the action.
var (
	errAccess    = refusal.New(refusal.Access, "grant too low", "This device's access on this computer does not allow this.")
	errSwitchOff = refusal.New(refusal.Switch, "full access off", "Turn on Full access for remote devices on this computer.")
)

var errBusy = ErrBusy

// accessError says which grant a method needs.
func accessError(scope string) error {
	return refusal.Errorf(errAccess, "This device's access on this computer does not allow this. Give it %s access there to use it.", scope)
}

// switchError says the switch is off, naming the action ("edit files").
func switchError(action string) error {
	return refusal.Errorf(errSwitchOff, "Turn on Full access for remote devices on this computer to %s.", action)
}

// codeOf maps any error to a response's code and sentence. The sentence is
// never err.Error(): only a refusal's own sentence, or the fixed internal one.
func codeOf(err error) (Code, string) {
	return codeFor(refusal.KindOf(err)), refusal.Sentence(err)
}
