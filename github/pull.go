package github

import (
	"context"
	"encoding/json"
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

// PullCreateOptions describe a new pull request: its title and text, and
// the branch it goes into ("" is the base repository's default branch,
// also for a fork's), and whether it opens as a draft.
type PullCreateOptions struct {
	Title, Body, Base string
	Draft             bool
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
	args := []string{"pr", "create", "--repo", pin.String(), "--head", head, "--base", base, "--title=" + o.Title, "--body-file", "-"}
	if o.Draft {
		args = append(args, "--draft")
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: args, Stdin: o.Body, Timeout: slowTimeout})
	if err != nil {
		return nil, err
	}
	d := done(out)
	d.Number = pullNumber(d.URL, pin)
	return d, nil
}

// pullNumber reads the number from a pull request's address in the
// repository pin ("https://HOST/OWNER/NAME/pull/N"), or 0.
func pullNumber(u string, pin Repo) int64 {
	if !ofRepo(u, pin) {
		return 0
	}
	rest := u[len("https://"+pin.Host+"/"+pin.FullName()+"/"):]
	n, err := strconv.ParseInt(strings.TrimPrefix(rest, "pull/"), 10, 64)
	if err != nil || !strings.HasPrefix(rest, "pull/") || n <= 0 {
		return 0
	}
	return n
}
