package methods

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/github"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// The GitHub methods: the user's own gh on the computer, pinned to the
// repository gh resolves for the project (package github, which starts gh
// through gate). Reads wait in
// the slow-read lane (each is a round trip to GitHub); changes are
// once-methods in the background lane.
func registerGitHub(r *rpc.Registry) error {
	list := func(ctx context.Context, c *rpc.Call, kind, target, state string, offset int) (any, error) {
		_, repo, err := repoOf(c, target)
		if err != nil {
			return nil, err
		}
		return github.ListOf(ctx, repo, c.Trust, kind, state, offset)
	}
	type numberParams struct {
		Target string `json:"target"`
		Number int64  `json:"number"`
	}
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "github.repos", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{items: [{nameWithOwner, description, isPrivate, updatedAt, url}], next?}", Note: "the signed-in account's, for a clone; pages of 30"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Offset int `json:"offset,omitempty"`
			}) (any, error) {
				return github.Repos(ctx, c.Host().Targets().GH(), p.Offset)
			}),
		rpc.Register(r, rpc.Method{Name: "github.issues", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{repo, items: [{number, title, state, author, updatedAt, labels}], next?}", Note: "pages of 30"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				State  string `json:"state,omitempty" value:"open|closed|all"`
				Offset int    `json:"offset,omitempty"`
			}) (any, error) {
				return list(ctx, c, "issues", p.Target, p.State, p.Offset)
			}),
		rpc.Register(r, rpc.Method{Name: "github.pulls", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{repo, items: [{number, title, state, author, headRefName, baseRefName, isDraft, updatedAt, reviewDecision}], next?}", Note: "pages of 30"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				State  string `json:"state,omitempty" value:"open|closed|merged|all"`
				Offset int    `json:"offset,omitempty"`
			}) (any, error) {
				return list(ctx, c, "pulls", p.Target, p.State, p.Offset)
			}),
		rpc.Register(r, rpc.Method{Name: "github.runs", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{repo, items: [{databaseId, displayTitle, status, conclusion, workflowName, headBranch, event, createdAt}], next?}", Note: "CI runs, pages of 30"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Offset int    `json:"offset,omitempty"`
			}) (any, error) {
				return list(ctx, c, "runs", p.Target, "", p.Offset)
			}),
		rpc.Register(r, rpc.Method{Name: "github.item", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "gh's view", Note: "an issue with comments, a pull request with statusCheckRollup and reviews, a run with jobs"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Kind   string `json:"kind" value:"issue|pull|run"`
				Number int64  `json:"number"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.Item(ctx, repo, c.Trust, p.Kind, p.Number)
			}),
		rpc.Register(r, rpc.Method{Name: "github.search", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{repo, items: [{number, title, state, author, isPullRequest, updatedAt, url}], next?}", Note: "issues and pull requests of the project's repository only"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Query  string `json:"query"`
				Offset int    `json:"offset,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.Search(ctx, repo, c.Trust, p.Query, p.Offset)
			}),
		rpc.Register(r, rpc.Method{Name: "github.comment", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 60 * time.Second,
			Reply: "{url}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Number int64  `json:"number"`
				Body   string `json:"body"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.Comment(ctx, repo, c.Trust, p.Number, p.Body)
			}),
		rpc.Register(r, rpc.Method{Name: "pull.diff", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{diff, truncated, hiddenSecrets?}", Note: "secret files' sections dropped, as in git.diff"},
			func(ctx context.Context, c *rpc.Call, p numberParams) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.PullDiff(ctx, repo, c.Trust, c.Grant, p.Number)
			}),
		rpc.Register(r, rpc.Method{Name: "pull.review", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 60 * time.Second,
			Reply: "{url?}"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Number int64  `json:"number"`
				Event  string `json:"event" value:"approve|request-changes|comment"`
				Body   string `json:"body,omitempty"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.PullReview(ctx, repo, c.Trust, p.Number, p.Event, p.Body)
			}),
		rpc.Register(r, rpc.Method{Name: "pull.merge", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 2 * time.Minute,
			Reply: "{url?}", Note: "the first method the repository allows: merge commit, squash, rebase; refused when the checkout's config would run a program"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Number int64  `json:"number"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.PullMerge(ctx, repo, c.Trust, p.Number)
			}),
		rpc.Register(r, rpc.Method{Name: "pull.create", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 3 * time.Minute,
			Reply: "{url}", Note: "pushes the current branch first; base: the base repository's default branch when left out"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Title  string `json:"title"`
				Body   string `json:"body,omitempty"`
				Base   string `json:"base,omitempty"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.PullCreate(ctx, repo, c.Trust, github.PullCreateOptions{Title: p.Title, Body: p.Body, Base: p.Base})
			}),
	)
}
