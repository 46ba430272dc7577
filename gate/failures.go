package gate

import (
	"errors"
	"strings"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// failure is one of git's usual failures: a message git prints (with LC_ALL=C,
// which the runner forces, so the text does not change with the user's
// locale) and the refusal that tells a person what to do about it.
type failure struct {
	text string
	// stdout: git prints this one on standard output (commit's status
	// listing, push --porcelain's ref lines), not on standard error.
	stdout bool
	err    *refusal.Error
}

// failures is git's wording as of 2.39, each checked against real git in
// TestGitFailureSentences. The first match wins, so the specific messages
// come before the loose ones ("already exists" last: a lock's "File exists"
// is not a branch that exists).
var failures = []failure{
	// No author identity: commit's "Author identity unknown" block, then one
	// of these fatal lines.
	{text: "Please tell me who you are", err: ErrNoIdentity},
	{text: "unable to auto-detect email address", err: ErrNoIdentity},
	{text: "no email was given and auto-detection is disabled", err: ErrNoIdentity},
	{text: "no name was given and auto-detection is disabled", err: ErrNoIdentity},
	{text: "empty ident name", err: ErrNoIdentity},
	// Another git holds a lock: "Unable to create '<path>/index.lock': File exists."
	{text: ".lock': File exists", err: ErrLocked},
	// A push the remote rejected because it has commits this branch lacks.
	{text: "[rejected] (non-fast-forward)", stdout: true, err: ErrPushRejected},
	{text: "[rejected] (fetch first)", stdout: true, err: ErrPushRejected},
	{text: "Updates were rejected because", err: ErrPushRejected},
	// The remote refused the credentials, or there were none to give
	// (GIT_TERMINAL_PROMPT=0 turns the prompt into this failure).
	{text: "Authentication failed for", err: ErrAuthFailed},
	{text: "could not read Username for", err: ErrAuthFailed},
	{text: "could not read Password for", err: ErrAuthFailed},
	{text: "Permission denied (publickey", err: ErrAuthFailed},
	{text: "You are not currently on a branch", err: ErrDetached},
	// Unmerged paths left by a merge on the computer.
	{text: "you have unmerged files", err: ErrUnmerged},
	{text: "unresolved conflict", err: ErrUnmerged},
	{text: "you need to resolve your current index first", err: ErrUnmerged},
	{text: "cannot switch branch while merging", err: ErrUnmerged},
	{text: "Automatic merge failed", stdout: true, err: ErrUnmerged},
	// No upstream, or one whose branch is gone from the remote.
	{text: "no upstream configured for branch", err: ErrNoUpstream},
	{text: "@{upstream} - not something we can merge", err: ErrNoUpstream},
	{text: "Not possible to fast-forward", err: ErrNotFastForward},
	{text: "nothing to commit", stdout: true, err: ErrNothingToCommit},
	{text: "nothing added to commit", stdout: true, err: ErrNothingToCommit},
	{text: "no changes added to commit", stdout: true, err: ErrNothingToCommit},
	{text: "would be overwritten", err: ErrDirty},
	{text: "contains modified or untracked files", err: ErrDirty},
	{text: "invalid reference", err: ErrUnknownRef},
	{text: "unknown revision", err: ErrUnknownRef},
	{text: "not a commit", err: ErrUnknownRef},
	{text: "did not match any", err: ErrUnknownRef},
	{text: "already exists", err: ErrExists},
}

// gitFailure turns a failed git run into the refusal that says what to do,
// keeping err (git's exit and stderr) in the chain for the host's log. res is
// what run returned with err (nil is fine). An error that is not a git exit,
// or a failure no entry names, is returned as it is: an *ExitError still
// reads ErrGitFailed's sentence.
func gitFailure(res *result, err error) error {
	var ee *ExitError
	if !errors.As(err, &ee) {
		return err
	}
	var stdout string
	if res != nil {
		stdout = string(res.stdout)
	}
	for _, f := range failures {
		out := ee.Stderr
		if f.stdout {
			out = stdout
		}
		if strings.Contains(out, f.text) {
			return errors.Join(f.err, err)
		}
	}
	return err
}
