// Package refusal carries what a device is told when gatehouse says no.
//
// A refusal has two faces. The sentence is the product's wording, written for
// the person holding the phone (docs/policy.md quotes them): it is safe to
// send to a device, names files only relative to their checkout and never
// holds an absolute path, a stack or a wrapped system error. The cause,
// reached through Error and errors.Unwrap, is for the host's own log.
//
// Packages that own a rule (fsguard, gate, trust) declare their refusals as
// sentinel *Error values, so callers branch with errors.Is and the transport
// finds the sentence with Sentence. A refusal that names a file is built with
// Errorf at the point where the file is known.
//
// This is the one vocabulary: no other package defines a type with a
// sentence of its own (internal/invariants checks it). The request
// protocol derives each wire code from a Kind; a refusal received from a
// host is read back as one here.
package refusal

import (
	"errors"
	"fmt"
)

// Kind says what sort of no a refusal is; the request protocol maps it to its
// error code.
type Kind uint8

const (
	// Internal is the zero Kind: a failure with no sentence of its own.
	Internal Kind = iota
	// BadParams: the request itself is malformed (a path that is not relative,
	// a parameter too long). Sending it again will not help.
	BadParams
	// Refused: a policy rule said no (a secret file, a hard link, a git
	// config that runs programs).
	Refused
	// NotFound: the named file or folder does not exist.
	NotFound
	// Conflict: the file changed since the device read it.
	Conflict
	// Busy: something else holds what this request needs; try again soon.
	Busy
	// Retry: nothing happened and trying again may work (a file swapped
	// while it was being opened, a request that waited too long).
	Retry
	// Access: the device's grant is too low for this.
	Access
	// Switch: this needs Full access for remote devices, which is off.
	Switch
	// UnknownMethod: the request names no method served here.
	UnknownMethod

	lastKind = UnknownMethod
)

// Kinds lists every Kind, so a table that maps them (the request
// protocol's codes) can be checked for gaps.
func Kinds() []Kind {
	out := make([]Kind, 0, lastKind+1)
	for k := Internal; k <= lastKind; k++ {
		out = append(out, k)
	}
	return out
}

func (k Kind) String() string {
	switch k {
	case BadParams:
		return "bad-params"
	case Refused:
		return "refused"
	case NotFound:
		return "not-found"
	case Conflict:
		return "conflict"
	case Busy:
		return "busy"
	case Retry:
		return "retry"
	case Access:
		return "access"
	case Switch:
		return "switch"
	case UnknownMethod:
		return "unknown-method"
	}
	return "internal"
}

// Error is a refusal: a kind, the sentence for the device and, for the log, a
// short cause.
type Error struct {
	kind     Kind
	sentence string
	cause    string
}

// New declares a refusal. cause is a short lowercase phrase for logs
// ("secret file"); sentence is what the device reads.
func New(kind Kind, cause, sentence string) *Error {
	return &Error{kind: kind, sentence: sentence, cause: cause}
}

func (e *Error) Error() string { return e.cause }

// Sentence is the text a device may be shown.
func (e *Error) Sentence() string { return e.sentence }

// Kind says what sort of refusal this is.
func (e *Error) Kind() Kind { return e.kind }

// Detailed is a refusal whose sentence names something (a file, a list of
// config keys) and that still matches its sentinel with errors.Is.
type Detailed struct {
	sentinel *Error
	sentence string
}

// Errorf builds a refusal of the same kind as sentinel whose sentence is
// formatted from format and args. The values must already be safe to show a
// device (paths relative to the checkout, never absolute).
func Errorf(sentinel *Error, format string, args ...any) *Detailed {
	return &Detailed{sentinel: sentinel, sentence: fmt.Sprintf(format, args...)}
}

func (d *Detailed) Error() string    { return d.sentinel.cause + ": " + d.sentence }
func (d *Detailed) Sentence() string { return d.sentence }
func (d *Detailed) Kind() Kind       { return d.sentinel.kind }
func (d *Detailed) Unwrap() error    { return d.sentinel }

// sentencer is what Sentence and KindOf look for in an error chain.
type sentencer interface {
	Sentence() string
	Kind() Kind
}

// InternalSentence is what a device is told for a failure that has no
// sentence of its own. The cause stays in the host's log.
const InternalSentence = "Something went wrong on the computer. Try again, or check gatehouse there."

// Sentence returns the device-facing sentence of the first refusal in err's
// chain, or InternalSentence when there is none. It never returns err.Error().
func Sentence(err error) string {
	var s sentencer
	if errors.As(err, &s) {
		return s.Sentence()
	}
	return InternalSentence
}

// KindOf returns the kind of the first refusal in err's chain, or Internal.
func KindOf(err error) Kind {
	var s sentencer
	if errors.As(err, &s) {
		return s.Kind()
	}
	return Internal
}
