package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/trust"
)

// PullDiff is a pull request's diff with the sections git.diff would drop
// left out: secret files below full, hard-linked files by name, through
// the gate's one visibility rule (gate.GH.FilterPatch).
func PullDiff(ctx context.Context, r *gate.Repo, t trust.Trust, g trust.Grant, number int64) (*gate.Diff, error) {
	if number <= 0 {
		return nil, ErrBadParams
	}
	gh, pin, _, err := start(ctx, r, t, false, "see a pull request's diff")
	if err != nil {
		return nil, err
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"pr", "diff", strconv.FormatInt(number, 10), "--repo", pin.String(), "--color=never"}})
	if err != nil {
		return nil, err
	}
	return gh.FilterPatch(g, out), nil
}

// PullReview approves a pull request, asks for changes, or comments on it
// (event approve, request-changes or comment; the last two need text).
func PullReview(ctx context.Context, r *gate.Repo, t trust.Trust, number int64, event, body string) (*Done, error) {
	if number <= 0 || event != "approve" && event != "request-changes" && event != "comment" {
		return nil, ErrBadParams
	}
	if err := checkText(body, MaxBody, event == "approve"); err != nil {
		return nil, err
	}
	gh, pin, _, err := start(ctx, r, t, false, "review on GitHub")
	if err != nil {
		return nil, err
	}
	args := []string{"pr", "review", strconv.FormatInt(number, 10), "--repo", pin.String(), "--" + event}
	if body != "" {
		args = append(args, "--body-file", "-")
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: args, Stdin: body})
	if err != nil {
		return nil, err
	}
	return done(out), nil
}

// PullMerge merges a pull request with the first way the repository
// allows (merge commit, squash, rebase). gh may run git in the checkout
// for it, so the checkout passes the Change gate first: a config that
// would run a program is refused for a closed caller.
func PullMerge(ctx context.Context, r *gate.Repo, t trust.Trust, number int64) (*Done, error) {
	if number <= 0 {
		return nil, ErrBadParams
	}
	gh, pin, _, err := start(ctx, r, t, true, "merge a pull request")
	if err != nil {
		return nil, err
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"repo", "view", pin.String(), "--json", "mergeCommitAllowed,squashMergeAllowed,rebaseMergeAllowed"}})
	if err != nil {
		return nil, err
	}
	var allowed struct{ MergeCommitAllowed, SquashMergeAllowed, RebaseMergeAllowed bool }
	if err := json.Unmarshal(out, &allowed); err != nil {
		return nil, fmt.Errorf("%w: %v", gate.ErrGHOutput, err)
	}
	method := ""
	switch {
	case allowed.MergeCommitAllowed:
		method = "--merge"
	case allowed.SquashMergeAllowed:
		method = "--squash"
	case allowed.RebaseMergeAllowed:
		method = "--rebase"
	default:
		return nil, ErrNoMergeMethod
	}
	out, err = gh.Run(ctx, gate.GHCall{Args: []string{"pr", "merge", strconv.FormatInt(number, 10), "--repo", pin.String(), method}, Timeout: slowTimeout})
	if err != nil {
		return nil, err
	}
	return &Done{URL: done(out).URL}, nil
}

// PullCreateOptions describe a new pull request: its title and text, and
// the branch it goes into ("" is the base repository's default branch,
// also for a fork's).
type PullCreateOptions struct {
	Title, Body, Base string
}

// PullCreate pushes the current branch (as git.push does, through the
// gate) and opens a pull request from it into the base repository; from a
// fork the head is named owner:branch. The checkout is held for the whole
// of it, so the branch pushed is the one the pull request names.
func PullCreate(ctx context.Context, r *gate.Repo, t trust.Trust, o PullCreateOptions) (*Done, error) {
	if err := checkText(o.Title, maxTitle, false); err != nil || strings.ContainsAny(o.Title, "\r\n") {
		return nil, ErrText
	}
	if err := checkText(o.Body, MaxBody, true); err != nil {
		return nil, err
	}
	if o.Base != "" && !gate.ValidBranch(o.Base) {
		return nil, gate.ErrBadRef
	}
	unlock, err := r.Hold()
	if err != nil {
		return nil, err
	}
	defer unlock()
	gh, pin, pushRepo, err := start(ctx, r, t, true, "open a pull request")
	if err != nil {
		return nil, err
	}
	branch, err := gh.PushBranch(ctx)
	if err != nil {
		return nil, err
	}
	base := o.Base
	if base == "" {
		out, err := gh.Run(ctx, gate.GHCall{Args: []string{"repo", "view", pin.String(), "--json", "defaultBranchRef"}})
		if err != nil {
			return nil, err
		}
		var v struct{ DefaultBranchRef struct{ Name string } }
		if json.Unmarshal(out, &v) != nil || !gate.ValidBranch(v.DefaultBranchRef.Name) {
			return nil, gate.ErrGHOutput
		}
		base = v.DefaultBranchRef.Name
	}
	head := branch
	if pushRepo.FullName() != pin.FullName() {
		head = pushRepo.Owner + ":" + branch
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"pr", "create", "--repo", pin.String(), "--head", head, "--base", base,
		"--title=" + o.Title, "--body-file", "-"}, Stdin: o.Body, Timeout: slowTimeout})
	if err != nil {
		return nil, err
	}
	return done(out), nil
}
