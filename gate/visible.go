package gate

import "github.com/gatehouse/gatehouse/trust"

// viewer is who a diff, a hunk or a staged file is for: the caller's trust
// and grant, as Repo.hidden needs them.
type viewer struct {
	t trust.Trust
	g trust.Grant
}

// hidesSecrets: below the full grant (and never for the desktop).
func (v viewer) hidesSecrets() bool { return !v.t.IsDesktop() && !v.g.SeesSecrets() }

// hidesLinks: every device; the desktop sees its own files.
func (v viewer) hidesLinks() bool { return !v.t.IsDesktop() }

// hiding is why a viewer may not see a path, or shown.
type hiding int

const (
	shown        hiding = iota
	secretHidden        // a secret file (fsguard's Root.Secret), below the full grant
	linkHidden          // a work-tree file hard-linked elsewhere, for every device
)

// hidden answers "may this viewer see this path" for Diff, Show,
// filterPatch, StageHunks, stage, Discard and Commit, so the rule is written
// once (internal/invariants' TestGateAsksTheVisibilityRuleInOnePlace holds
// it to that; an untracked file's preview is read through fsguard's own read
// rule, which refuses a hard link to every caller): below the
// full grant a secret file is hidden (the secret-file rules of fsguard's
// Root.Secret, a matter of the name); for every device a file whose work
// tree copy is hard-linked elsewhere is hidden, since its bytes are another
// file's (fsguard's Root.HardLinked). worktree says the work tree's copy
// counts: for what the caller reads or writes through it, and for every
// diff a device sees, of the work tree, the index or a commit, since the
// index and the commit took their bytes from that copy (a link to
// ~/.ssh/id_rsa committed as notes.txt showed the key in git.show while
// git.diff hid it). A path the caller names is judged by its name alone
// (refuseNamed): the diff then leaves the linked section out. The secret
// comes first: a hard-linked secret is refused as a secret.
//
// A section of a patch whose names could not all be read is hidden too; that
// is Repo.hides's part, since only a patch has such names.
func (r *Repo) hidden(v viewer, path string, worktree bool) hiding {
	if v.hidesSecrets() {
		if _, secret := r.root.Secret(path); secret {
			return secretHidden
		}
	}
	if worktree && v.hidesLinks() && r.root.HardLinked(path) {
		return linkHidden
	}
	return shown
}

// refuseNamed is Diff's and Show's answer for the one path a viewer named:
// ErrSecret for a secret it may not see. The name is all that counts here
// (worktree false): a hard-linked file's sections of any diff are left out
// by filterPatch.
func (r *Repo) refuseNamed(v viewer, path string) error {
	if r.hidden(v, path, false) == secretHidden {
		return ErrSecret
	}
	return nil
}

// commitLinksShownForTest judges a commit's sections by their names alone,
// as Show did, to show what leaving out a linked path's section stops.
var commitLinksShownForTest bool
