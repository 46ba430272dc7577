package rpc

import (
	"errors"
	"testing"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// The wire codes are derived from refusal kinds by codeFor; this table is
// the codes each refusal had when rpc declared its own error type, so a
// change of Kind cannot move a device's code unnoticed.
func TestRefusalCodesOnTheWire(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Code
	}{
		{ErrUnknownMethod, CodeUnknownMethod},
		{ErrNoGrant, CodeAccess},
		{ErrNotRun, CodeNotRun},
		{ErrStale, CodeNotRun},
		{ErrBusy, CodeBusy},
		{ErrBadParams, CodeBadParams},
		{ErrTooLarge, CodeInternal},
		{ErrNoTarget, CodeBadParams},
		{ErrNotCheckout, CodeRefused},
		{ErrNotInBatch, CodeBadParams},
		{ErrOnceRunning, CodeBusy},
		{ErrNotPresent, CodeAccess},
		{accessError("full"), CodeAccess},
		{switchError("edit files"), CodeSwitch},
		{ParamError("path", "a relative path"), CodeBadParams},
		{ErrOffline, CodeNotRun},
		{ErrNoAnswer, CodeInternal},
		{errors.New("open /home/x: denied"), CodeInternal},
	} {
		code, sentence := codeOf(c.err)
		if code != c.want {
			t.Errorf("%v: code %s, want %s", c.err, code, c.want)
		}
		if sentence != refusal.Sentence(c.err) {
			t.Errorf("%v: sentence %q is not the refusal's", c.err, sentence)
		}
	}
	if _, s := codeOf(errors.New("open /home/x: denied")); s != refusal.InternalSentence {
		t.Errorf("an internal error's sentence: %q", s)
	}
	if !errors.Is(ParamError("path", "a relative path"), ErrBadParams) {
		t.Error("a parameter refusal does not match ErrBadParams")
	}
}

// Every kind has a code, and a code a host sends reads back as the kind
// that gave it (NotFound shares BAD_PARAMS), so a device branches on the
// same kinds the host decided.
func TestEveryKindHasACode(t *testing.T) {
	seen := map[Code]bool{}
	for _, k := range refusal.Kinds() {
		code := codeFor(k)
		if code == CodeInternal && k != refusal.Internal {
			t.Errorf("kind %s has no code of its own", k)
		}
		if back := kindOf(code); back != k && k != refusal.NotFound {
			t.Errorf("kind %s: code %s reads back as %s", k, code, back)
		}
		seen[code] = true
	}
	for _, c := range []Code{CodeNotRun, CodeAccess, CodeSwitch, CodeRefused, CodeConflict, CodeBusy, CodeBadParams, CodeUnknownMethod, CodeInternal} {
		if !seen[c] {
			t.Errorf("code %s comes from no kind", c)
		}
	}
	if kindOf("FROM_A_NEWER_HOST") != refusal.Internal {
		t.Error("an unknown code is not Internal")
	}
}

// A host's refusal reaches the device as a refusal: its sentence and kind
// through the refusal package, its code as the host sent it.
func TestRemoteErrorIsARefusal(t *testing.T) {
	var err error = remoteError(CodeSwitch, "Turn it on.")
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != CodeSwitch || refusal.Sentence(err) != "Turn it on." || refusal.KindOf(err) != refusal.Switch {
		t.Fatalf("%v: kind %s sentence %q", err, refusal.KindOf(err), refusal.Sentence(err))
	}
	if err := remoteError("FROM_A_NEWER_HOST", "Something new."); refusal.Sentence(err) != "Something new." || err.Code != "FROM_A_NEWER_HOST" {
		t.Fatalf("%v", err)
	}
}
