package fakegithub

import (
	"fmt"
	"strings"
	"time"
)

// mutationRoot holds the writes gh makes. Each changes Data (the caller holds
// s.Mu) and answers the changed object, so gh's selection can read it back.
func (q *query) mutationRoot() obj {
	return obj{
		"__typename":           "Mutation",
		"addComment":           fieldFunc(q.addComment),
		"addPullRequestReview": fieldFunc(q.addReview),
		"mergePullRequest":     fieldFunc(q.mergePull),
		"createPullRequest":    fieldFunc(q.createPull),
	}
}

func input(a map[string]any) map[string]any {
	m, _ := a["input"].(map[string]any)
	return m
}

// target finds the issue or pull request a node id names.
func (q *query) target(id string) (key string, issue *Issue, pull *Pull) {
	parts := strings.Split(id, ":")
	if len(parts) != 3 {
		return "", nil, nil
	}
	key = parts[1]
	switch parts[0] {
	case "Issue":
		return key, q.findIssue(key, num(parts[2])), nil
	case "PullRequest":
		return key, nil, q.findPull(key, num(parts[2]))
	}
	return "", nil, nil
}

func (q *query) addComment(a map[string]any) any {
	in := input(a)
	key, issue, pull := q.target(str(in["subjectId"]))
	c := Comment{Author: Login, Body: str(in["body"]), CreatedAt: time.Now().UTC()}
	var subject obj
	var n int
	switch {
	case issue != nil:
		issue.Comments = append(issue.Comments, c)
		issue.UpdatedAt, n = c.CreatedAt, len(issue.Comments)
		subject = q.issue(key, *issue)
	case pull != nil:
		pull.Comments = append(pull.Comments, c)
		pull.UpdatedAt, n = c.CreatedAt, len(pull.Comments)
		subject = q.pull(key, *pull)
	default:
		q.fail("NOT_FOUND", "addComment", "Could not resolve to a node with the global id of '%s'", str(in["subjectId"]))
		return nil
	}
	node := q.comments(key, subject["number"].(int), []Comment{c})[0]
	node["url"] = fmt.Sprintf("%s#issuecomment-%d", subject["url"], n)
	return obj{"__typename": "AddCommentPayload", "clientMutationId": in["clientMutationId"],
		"subject": subject, "commentEdge": obj{"node": node}}
}

var reviewStates = map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}

func (q *query) addReview(a map[string]any) any {
	in := input(a)
	key, _, pull := q.target(str(in["pullRequestId"]))
	state, ok := reviewStates[str(in["event"])]
	if pull == nil || !ok {
		q.fail("UNPROCESSABLE", "addPullRequestReview", "Could not add the review: unknown pull request or event %q", str(in["event"]))
		return nil
	}
	if state == "CHANGES_REQUESTED" && strings.TrimSpace(str(in["body"])) == "" {
		q.fail("UNPROCESSABLE", "addPullRequestReview", "Review body is required when requesting changes.")
		return nil
	}
	pull.Reviews = append(pull.Reviews, Review{Author: Login, State: state, Body: str(in["body"]), SubmittedAt: time.Now().UTC()})
	if state != "COMMENTED" {
		pull.ReviewDecision = state
	}
	reviews := q.reviews(key, *pull)
	return obj{"__typename": "AddPullRequestReviewPayload", "clientMutationId": in["clientMutationId"],
		"pullRequestReview": reviews[len(reviews)-1], "pullRequest": q.pull(key, *pull)}
}

// mergeRefusals are GitHub's own sentences for a method the repository
// does not allow.
var mergeRefusals = map[string]string{
	"MERGE":  "Merge commits are not allowed on this repository.",
	"SQUASH": "Squash merges are not allowed on this repository.",
	"REBASE": "Rebase merges are not allowed on this repository.",
}

func (q *query) mergePull(a map[string]any) any {
	in := input(a)
	key, _, pull := q.target(str(in["pullRequestId"]))
	repo, _ := q.findRepo(splitKey(key))
	method := str(in["mergeMethod"])
	if method == "" {
		method = "MERGE"
	}
	allowed := map[string]bool{"MERGE": repo.MergeAllowed, "SQUASH": repo.SquashAllowed, "REBASE": repo.RebaseAllowed}
	switch {
	case pull == nil:
		q.fail("NOT_FOUND", "mergePullRequest", "Could not resolve to a node with the global id of '%s'", str(in["pullRequestId"]))
		return nil
	case !allowed[method]:
		q.fail("UNPROCESSABLE", "mergePullRequest", "%s", mergeRefusals[method])
		return nil
	case pull.IsDraft:
		q.fail("UNPROCESSABLE", "mergePullRequest", "Pull Request is still a draft")
		return nil
	case pull.State != "OPEN" || pull.Mergeable == "CONFLICTING":
		q.fail("UNPROCESSABLE", "mergePullRequest", "Pull Request is not mergeable")
		return nil
	}
	pull.State, pull.MergedWith, pull.UpdatedAt = "MERGED", strings.ToLower(method), time.Now().UTC()
	pull.MergeSubject, pull.MergeBody = str(in["commitHeadline"]), str(in["commitBody"])
	return obj{"__typename": "MergePullRequestPayload", "clientMutationId": in["clientMutationId"], "pullRequest": q.pull(key, *pull)}
}

func (q *query) createPull(a map[string]any) any {
	in := input(a)
	key := strings.TrimPrefix(str(in["repositoryId"]), "R:")
	repo, ok := q.findRepo(splitKey(key))
	head := str(in["headRefName"])
	headOwner := ""
	if owner, branch, cross := strings.Cut(head, ":"); cross {
		headOwner, head = owner, branch
		if headOwner == repo.Owner {
			headOwner = ""
		}
	}
	switch {
	case !ok:
		q.fail("NOT_FOUND", "createPullRequest", "Could not resolve to a node with the global id of '%s'", str(in["repositoryId"]))
		return nil
	case head == "" || str(in["title"]) == "":
		q.fail("UNPROCESSABLE", "createPullRequest", "A head branch and a title are required.")
		return nil
	}
	for _, p := range q.s.Data.Pulls[key] {
		if p.HeadRefName == head && p.HeadOwner == headOwner && p.State == "OPEN" {
			q.fail("UNPROCESSABLE", "createPullRequest", "A pull request already exists for %s:%s.", repo.Owner, head)
			return nil
		}
	}
	now := time.Now().UTC()
	p := Pull{Number: q.nextNumber(key), Title: str(in["title"]), Body: str(in["body"]), State: "OPEN",
		IsDraft: in["draft"] == true, Author: Login, HeadRefName: head, HeadOwner: headOwner,
		BaseRefName: str(in["baseRefName"]), Mergeable: "UNKNOWN", CreatedAt: now, UpdatedAt: now}
	if q.s.Data.Pulls == nil {
		q.s.Data.Pulls = map[string][]Pull{}
	}
	q.s.Data.Pulls[key] = append(q.s.Data.Pulls[key], p)
	return obj{"__typename": "CreatePullRequestPayload", "clientMutationId": in["clientMutationId"], "pullRequest": q.pull(key, p)}
}

// nextNumber is the next number in the repository's shared issue and pull
// request sequence.
func (q *query) nextNumber(key string) int {
	n := 0
	for _, i := range q.s.Data.Issues[key] {
		n = max(n, i.Number)
	}
	for _, p := range q.s.Data.Pulls[key] {
		n = max(n, p.Number)
	}
	return n + 1
}
