// Package methods holds gatehouse's request handlers, one file per group.
//
// A handler validates its parameters with rpc's shared validators, calls
// gate or fsguard with the call's trust and grant, and shapes the reply to
// fit the page budget. It holds no policy: every rule lives in the package
// that owns it, and a source test fails if this package opens a file or
// starts a process itself.
package methods

import (
	"errors"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/rpc"
)

// Register declares every method of every group.
func Register(r *rpc.Registry) error {
	return errors.Join(registerProjects(r), registerGit(r), registerWorktrees(r), registerFiles(r), registerSubscribe(r), registerGitHub(r), registerClone(r), registerConflicts(r), registerEveryday(r), registerBranches(r), registerBlame(r))
}

// repoOf returns a target's git checkout, refusing a folder that is not one.
func repoOf(c *rpc.Call, target string) (*rpc.Target, *gate.Repo, error) {
	t, err := c.Target(target)
	if err != nil {
		return nil, nil, err
	}
	if t.Repo == nil {
		return nil, nil, rpc.ErrNotCheckout
	}
	return t, t.Repo, nil
}
