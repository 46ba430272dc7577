package rpc

import (
	"errors"

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

// Error is a dispatcher's own refusal: a code and the sentence.
type Error struct {
	Code     Code
	sentence string
	// base is the sentinel a detailed refusal still matches with errors.Is
	// (a parameter refusal that names its field is ErrBadParams).
	base *Error
}

// Is makes a detailed refusal match its sentinel.
func (e *Error) Is(target error) bool { return e.base != nil && target == e.base }

func (e *Error) Error() string    { return string(e.Code) + ": " + e.sentence }
func (e *Error) Sentence() string { return e.sentence }
func (e *Error) Kind() refusal.Kind {
	switch e.Code {
	case CodeBadParams, CodeUnknownMethod:
		return refusal.BadParams
	case CodeBusy:
		return refusal.Busy
	case CodeConflict:
		return refusal.Conflict
	case CodeNotRun:
		return refusal.Retry
	case CodeInternal:
		return refusal.Internal
	}
	return refusal.Refused
}

func newError(code Code, sentence string) *Error { return &Error{Code: code, sentence: sentence} }

// The dispatcher's refusals. Method handlers return the refusals of the
// package that owns the rule (fsguard, gate); these are for what the
// dispatcher itself decides.
var (
	ErrUnknownMethod = newError(CodeUnknownMethod, "Unknown method.")
	ErrNoGrant       = newError(CodeAccess, "This device is not allowed on this computer. Allow it there first.")
	ErrNotRun        = newError(CodeNotRun, "This request waited too long on the computer and did not run. Try again.")
	ErrStale         = newError(CodeNotRun, "This request was stale or repeated, so it did not run. Check this device's clock.")
	ErrBusy          = newError(CodeBusy, "Too many requests at once. Try again in a moment.")
	ErrBadParams     = newError(CodeBadParams, "This request's parameters are not valid.")
	ErrTooLarge      = newError(CodeInternal, "The answer was too large to send. Ask for less at a time.")
	ErrNoTarget      = newError(CodeBadParams, "This project is not served here.")
	ErrNotCheckout   = newError(CodeRefused, "This folder is not a git checkout.")
	ErrNotInBatch    = newError(CodeBadParams, "Only quick read-only methods can be batched.")
	ErrOnceRunning   = newError(CodeBusy, "This is already running. Wait for it to finish.")
)

var errBusy = ErrBusy

// accessError says which grant a method needs.
func accessError(scope string) *Error {
	return newError(CodeAccess, "This device's access on this computer does not allow this. Give it "+scope+" access there to use it.")
}

// switchError says the switch is off, naming the action ("edit files").
func switchError(action string) *Error {
	return newError(CodeSwitch, "Turn on Full access for remote devices on this computer to "+action+".")
}

// codeOf maps any error to a response's code and sentence. The sentence is
// never err.Error(): only a refusal's own sentence, or the fixed internal one.
func codeOf(err error) (Code, string) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, e.sentence
	}
	sentence := refusal.Sentence(err)
	switch refusal.KindOf(err) {
	case refusal.BadParams, refusal.NotFound:
		return CodeBadParams, sentence
	case refusal.Refused:
		return CodeRefused, sentence
	case refusal.Conflict:
		return CodeConflict, sentence
	case refusal.Busy:
		return CodeBusy, sentence
	case refusal.Retry:
		return CodeNotRun, sentence
	}
	return CodeInternal, refusal.InternalSentence
}
