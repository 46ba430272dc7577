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
			Reply: "{repo, items: [{number, title, state, author, isPullRequest, updatedAt, url}], next?, dropped?}", Note: "issues and pull requests of the project's repository only: a query with repo:, org:, user: or owner: is refused, and a result elsewhere is dropped and counted"},
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
			Reply: "{url?}", Note: "method as asked, refused when the repository does not allow it (left out: the first allowed of merge, squash, rebase); subject and body default as GitHub's; one merge per pull request at a time; refused when the checkout's config would run a program"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target  string `json:"target"`
				Number  int64  `json:"number"`
				Method  string `json:"method,omitempty" value:"merge|squash|rebase"`
				Subject string `json:"subject,omitempty"`
				Body    string `json:"body,omitempty"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.PullMerge(ctx, repo, c.Trust, p.Number, github.PullMergeOptions{Method: p.Method, Subject: p.Subject, Body: p.Body})
			}),
		rpc.Register(r, rpc.Method{Name: "pull.options", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{repo, defaultBranch, branches, methods}", Note: "for a new pull request's base (default branch first, up to 100) and the merge methods the repository allows"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.Options(ctx, repo, c.Trust)
			}),
		rpc.Register(r, rpc.Method{Name: "pull.files", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{files: [{path, oldPath?, status, added, deleted}], total, next?, hiddenSecrets?}", Note: "pages of 50; secret files left out below full, as in pull.diff"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Number int64  `json:"number"`
				Offset int    `json:"offset,omitempty"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.PullFiles(ctx, repo, c.Trust, c.Grant, p.Number, p.Offset)
			}),
		rpc.Register(r, rpc.Method{Name: "pull.file", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{diff, truncated}", Note: "one file's diff, cut at 120 KiB; a secret file below full is not found"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Number int64  `json:"number"`
				Path   string `json:"path"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.PullFile(ctx, repo, c.Trust, c.Grant, p.Number, p.Path)
			}),
		rpc.Register(r, rpc.Method{Name: "github.runLog", Scope: trust.View, Lane: rpc.LaneSlowRead, ReadOnly: true, Wait: 60 * time.Second,
			Reply: "{jobs: [{name, step?, lines, truncated, masked?}], more?}", Note: "each failed job's last 200 lines (32 KiB), terminal control taken out, values that look like secrets masked"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				ID     int64  `json:"id"`
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.RunLog(ctx, repo, c.Trust, p.ID)
			}),
		rpc.Register(r, rpc.Method{Name: "pull.create", Scope: trust.Full, Lane: rpc.LaneBackground, Wait: 3 * time.Minute,
			Reply: "{url, number}", Note: "pushes the current branch first; base: the base repository's default branch when left out; draft opens it as a draft"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Target string `json:"target"`
				Title  string `json:"title"`
				Body   string `json:"body,omitempty"`
				Base   string `json:"base,omitempty"`
				Draft  bool   `json:"draft,omitempty"`
				rpc.SendID
			}) (any, error) {
				_, repo, err := repoOf(c, p.Target)
				if err != nil {
					return nil, err
				}
				return github.PullCreate(ctx, repo, c.Trust, github.PullCreateOptions{Title: p.Title, Body: p.Body, Base: p.Base, Draft: p.Draft})
			}),
	)
}
