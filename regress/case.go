// Package regress is gatehouse's exploit corpus and its runner: each case
// builds a repository with the real git that, without gatehouse, makes git
// run a program (the payload only creates a marker file in the case's own
// folder), leak a secret, or write outside the checkout; the runner proves
// the exploit fires with plain git or the desktop trust, then runs the same
// gatehouse method through the real host dispatch as an untrusted phone and
// checks that the marker never appears and the answer is the expected
// refusal or a safe success.
//
// Run it on every git upgrade (gatehouse regress --git PATH) and in CI (go
// test ./regress/). A case whose exploit does not fire on a git it applies
// to fails as not-reproduced: it has lost its teeth, and that must be seen.
//
// Nothing here touches the network: remotes are local paths or servers on
// loopback started by the case.
package regress

import (
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Case is one attack.
type Case struct {
	// Name is the attack, as a short slug ("hook-pre-commit").
	Name string
	// Attack says in one sentence what the repository tries.
	Attack string
	// Since is the first git version the attack applies to ("2.41");
	// older gits skip the case. Before, when set, is the first version it
	// no longer applies to.
	Since, Before string
	// Build makes the hostile checkout in e.Dir (and anything beside it in
	// e.Work) with plain git. It runs twice: once to reproduce, once to
	// attack through gatehouse.
	Build func(e *Env)
	// Method and Params are the victim operation, as a device calls it.
	// Params may use "$target" for the checkout's target id and "$marker".
	Method string
	Params func(e *Env) map[string]any
	// Grant is the attacking phone's grant (default full): the switch is off.
	Grant trust.Grant
	// Plain, when set, reproduces the exploit with plain git instead of the
	// method with the desktop trust (for operations gatehouse never lets run
	// a program, even for the desktop), and returns what it printed.
	Plain func(e *Env) string
	// Fired says whether the exploit fired, given the reproduction's output
	// (plain git's, or the desktop reply's JSON) or the phone reply's JSON.
	// The default is: the marker file exists.
	Fired func(e *Env, output string) bool
	// Want is gatehouse's answer to the phone.
	Want Want
}

// Want is the expected answer: a refusal (Code and a part of its sentence)
// or a safe success (Code "").
type Want struct {
	Code     rpc.Code
	Sentence string
	// Unserved: serving the folder at all is refused, with Sentence; the
	// method never runs.
	Unserved bool
}

// safe is a safe success: the method runs and the exploit does not fire.
var safe = Want{}

func refused(sentence string) Want { return Want{Code: rpc.CodeRefused, Sentence: sentence} }

func badParams(sentence string) Want { return Want{Code: rpc.CodeBadParams, Sentence: sentence} }

// Sentences the corpus expects, in part.
const (
	runsPrograms = "git config runs programs"
	subs         = "has submodules"
	secretFile   = "may hold secrets"
	hardLinked   = "hard-linked elsewhere"
)
