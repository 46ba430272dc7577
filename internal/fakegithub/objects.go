package fakegithub

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file turns Data into GraphQL objects, shaped as GitHub's schema, and
// holds the query and mutation roots. Callers hold s.Mu.

func (q *query) queryRoot() obj {
	return obj{
		"__typename": "Query",
		"viewer":     q.user(Login),
		"repository": fieldFunc(func(a map[string]any) any {
			return q.repositoryByName(str(a["owner"]), str(a["name"]))
		}),
		"repositoryOwner": fieldFunc(func(a map[string]any) any { return q.user(str(a["login"])) }),
		"user":            fieldFunc(func(a map[string]any) any { return q.user(str(a["login"])) }),
		"node":            fieldFunc(func(a map[string]any) any { return q.node(str(a["id"])) }),
		"search":          fieldFunc(q.search),
		"__type":          fieldFunc(introspectType),
	}
}

// introspectType answers gh's feature detection (Issue_fields,
// PullRequest_fields, Repository_fields). The fake claims only the fields it
// serves, so gh takes its plainer paths: no stateReason, no merge queue.
func introspectType(a map[string]any) any {
	fields := map[string][]string{
		"Repository":  {"name", "visibility", "pullRequestTemplates", "issueTemplates"},
		"Issue":       {"number", "title", "body", "state"},
		"PullRequest": {"number", "title", "body", "state", "reviewDecision", "statusCheckRollup"},
	}[str(a["name"])]
	out := make([]obj, len(fields))
	for i, f := range fields {
		out[i] = obj{"name": f}
	}
	return obj{"__typename": "__Type", "name": a["name"], "fields": fieldFunc(func(map[string]any) any { return out })}
}

func (q *query) user(login string) obj {
	if login == "" {
		return nil
	}
	return obj{
		"__typename": "User", "__implements": []string{"Actor", "RepositoryOwner"},
		"id": "U_" + login, "login": login, "name": strings.ToUpper(login[:1]) + login[1:],
		"url": q.s.url(login), "databaseId": 1,
		"repositories": fieldFunc(func(a map[string]any) any {
			var repos []obj
			for _, r := range q.s.Data.Repos {
				if r.Owner == login && !(a["privacy"] == "PUBLIC" && r.Private) && !(a["privacy"] == "PRIVATE" && !r.Private) {
					repos = append(repos, q.repository(r))
				}
			}
			sort.SliceStable(repos, func(i, j int) bool { return repos[i]["updatedAt"].(string) > repos[j]["updatedAt"].(string) })
			return connection(repos, a)
		}),
	}
}

func (q *query) findRepo(owner, name string) (Repo, bool) {
	for _, r := range q.s.Data.Repos {
		if strings.EqualFold(r.Owner, owner) && strings.EqualFold(r.Name, name) {
			return r, true
		}
	}
	return Repo{}, false
}

func (q *query) repositoryByName(owner, name string) any {
	r, ok := q.findRepo(owner, name)
	if !ok {
		q.fail("NOT_FOUND", "repository", "Could not resolve to a Repository with the name '%s/%s'.", owner, name)
		return nil
	}
	return q.repository(r)
}

func (q *query) repository(r Repo) obj {
	key := r.NameWithOwner()
	visibility := "PUBLIC"
	if r.Private {
		visibility = "PRIVATE"
	}
	return obj{
		"__typename": "Repository", "id": "R:" + key, "name": r.Name, "nameWithOwner": key,
		"owner": q.user(r.Owner), "description": r.Description, "isPrivate": r.Private,
		"visibility": visibility, "url": q.s.url(key), "updatedAt": stamp(r.UpdatedAt),
		"pushedAt": stamp(r.UpdatedAt), "isFork": false, "isArchived": false, "isEmpty": false,
		"isInOrganization": false, "parent": nil, "hasIssuesEnabled": true, "hasWikiEnabled": false,
		"viewerPermission": "ADMIN", "stargazerCount": 0, "forkCount": 0, "sshUrl": "git@" + q.s.Host + ":" + key + ".git",
		"defaultBranchRef":   obj{"__typename": "Ref", "name": r.DefaultBranch, "target": obj{"oid": oid(key)}},
		"mergeCommitAllowed": r.MergeAllowed, "squashMergeAllowed": r.SquashAllowed, "rebaseMergeAllowed": r.RebaseAllowed,
		"viewerDefaultMergeMethod": defaultMethod(r), "deleteBranchOnMerge": false, "autoMergeAllowed": false,
		"pullRequestTemplates": []obj{}, "issueTemplates": []obj{},
		"pullRequest": fieldFunc(func(a map[string]any) any { return q.pullByNumber(r, num(a["number"])) }),
		"issue":       fieldFunc(func(a map[string]any) any { return q.issueByNumber(r, num(a["number"]), true) }),
		"issueOrPullRequest": fieldFunc(func(a map[string]any) any {
			if p := q.findPull(key, num(a["number"])); p != nil {
				return q.pull(key, *p)
			}
			return q.issueByNumber(r, num(a["number"]), false)
		}),
		"pullRequests": fieldFunc(func(a map[string]any) any { return connection(q.pulls(key, a), a) }),
		"issues":       fieldFunc(func(a map[string]any) any { return connection(q.issues(key, a), a) }),
	}
}

func defaultMethod(r Repo) string {
	switch {
	case r.MergeAllowed:
		return "MERGE"
	case r.SquashAllowed:
		return "SQUASH"
	default:
		return "REBASE"
	}
}

func (q *query) findPull(key string, n int) *Pull {
	for i := range q.s.Data.Pulls[key] {
		if q.s.Data.Pulls[key][i].Number == n {
			return &q.s.Data.Pulls[key][i]
		}
	}
	return nil
}

func (q *query) findIssue(key string, n int) *Issue {
	for i := range q.s.Data.Issues[key] {
		if q.s.Data.Issues[key][i].Number == n {
			return &q.s.Data.Issues[key][i]
		}
	}
	return nil
}

func (q *query) pullByNumber(r Repo, n int) any {
	p := q.findPull(r.NameWithOwner(), n)
	if p == nil {
		q.fail("NOT_FOUND", "repository", "Could not resolve to a PullRequest with the number of %d.", n)
		return nil
	}
	return q.pull(r.NameWithOwner(), *p)
}

// issueByNumber answers repository.issue; GitHub answers a pull request's
// number there too, and gh relies on it.
func (q *query) issueByNumber(r Repo, n int, pullsToo bool) any {
	key := r.NameWithOwner()
	if i := q.findIssue(key, n); i != nil {
		return q.issue(key, *i)
	}
	if p := q.findPull(key, n); p != nil && pullsToo {
		return q.pull(key, *p)
	}
	q.fail("NOT_FOUND", "repository", "Could not resolve to an issue or pull request with the number of %d.", n)
	return nil
}

func statesFilter(a map[string]any) map[string]bool {
	list, ok := a["states"].([]any)
	if !ok {
		return nil
	}
	want := map[string]bool{}
	for _, s := range list {
		want[str(s)] = true
	}
	return want
}

func (q *query) pulls(key string, a map[string]any) []obj {
	want := statesFilter(a)
	var out []obj
	for _, p := range q.s.Data.Pulls[key] {
		if want != nil && !want[p.State] {
			continue
		}
		if h := str(a["headRefName"]); h != "" && h != p.HeadRefName {
			continue
		}
		if b := str(a["baseRefName"]); b != "" && b != p.BaseRefName {
			continue
		}
		out = append(out, q.pull(key, p))
	}
	return newestFirst(out)
}

func (q *query) issues(key string, a map[string]any) []obj {
	want := statesFilter(a)
	var out []obj
	for _, i := range q.s.Data.Issues[key] {
		if want == nil || want[i.State] {
			out = append(out, q.issue(key, i))
		}
	}
	return newestFirst(out)
}

func newestFirst(list []obj) []obj {
	sort.SliceStable(list, func(i, j int) bool { return list[i]["number"].(int) > list[j]["number"].(int) })
	return list
}

// common holds the fields issues and pull requests share.
func (q *query) common(key, typ, kind string, n int, title, body, state, author string, labels []string, comments []Comment, created, updated time.Time) obj {
	closed := state != "OPEN"
	return obj{
		"__typename": typ, "id": fmt.Sprintf("%s:%s:%d", typ, key, n), "number": n,
		"title": title, "body": body, "state": state, "author": q.user(author),
		"url":       q.s.url(fmt.Sprintf("%s/%s/%d", key, kind, n)),
		"createdAt": stamp(created), "updatedAt": stamp(updated),
		"closed": closed, "closedAt": closedAt(closed, updated), "locked": false,
		"labels":          fieldFunc(func(a map[string]any) any { return connection(labelObjs(labels), a) }),
		"comments":        fieldFunc(func(a map[string]any) any { return connection(q.comments(key, n, comments), a) }),
		"assignees":       fieldFunc(func(a map[string]any) any { return connection(nil, a) }),
		"projectCards":    fieldFunc(func(a map[string]any) any { return connection(nil, a) }),
		"projectItems":    fieldFunc(func(a map[string]any) any { return connection(nil, a) }),
		"milestone":       nil,
		"reactionGroups":  []obj{},
		"viewerCanUpdate": true,
		"repository":      fieldFunc(func(map[string]any) any { return q.repositoryByName(splitKey(key)) }),
	}
}

func (q *query) issue(key string, i Issue) obj {
	o := q.common(key, "Issue", "issues", i.Number, i.Title, i.Body, i.State, i.Author, i.Labels, i.Comments, i.CreatedAt, i.UpdatedAt)
	o["isPullRequest"] = false
	return o
}

func (q *query) pull(key string, p Pull) obj {
	o := q.common(key, "PullRequest", "pull", p.Number, p.Title, p.Body, p.State, p.Author, p.Labels, p.Comments, p.CreatedAt, p.UpdatedAt)
	owner, name := splitKey(key)
	headOwner := owner
	if p.HeadOwner != "" {
		headOwner = p.HeadOwner
	}
	var decision any
	if p.ReviewDecision != "" {
		decision = p.ReviewDecision
	}
	merged := p.State == "MERGED"
	for k, v := range map[string]any{
		"isPullRequest": true, "isDraft": p.IsDraft, "headRefName": p.HeadRefName, "baseRefName": p.BaseRefName,
		"headRefOid": oid(key + p.HeadRefName), "baseRefOid": oid(key + p.BaseRefName),
		"headRepositoryOwner": q.user(headOwner),
		"headRepository":      obj{"__typename": "Repository", "id": "R:" + headOwner + "/" + name, "name": name, "nameWithOwner": headOwner + "/" + name},
		"isCrossRepository":   headOwner != owner, "maintainerCanModify": headOwner != owner,
		"mergeable": p.Mergeable, "reviewDecision": decision, "merged": merged, "mergedAt": closedAt(merged, p.UpdatedAt),
		"mergeStateStatus": "CLEAN", "autoMergeRequest": nil, "isInMergeQueue": false, "mergeCommit": nil,
		"potentialMergeCommit": obj{"oid": oid(key + "merge")},
		"additions":            strings.Count(p.Diff, "\n+"), "deletions": strings.Count(p.Diff, "\n-"),
		"changedFiles": strings.Count(p.Diff, "diff --git"), "baseRef": obj{"branchProtectionRule": nil},
		"reviews":           fieldFunc(func(a map[string]any) any { return connection(q.reviews(key, p), a) }),
		"latestReviews":     fieldFunc(func(a map[string]any) any { return connection(q.reviews(key, p), a) }),
		"reviewRequests":    fieldFunc(func(a map[string]any) any { return connection(nil, a) }),
		"files":             fieldFunc(func(a map[string]any) any { return connection(nil, a) }),
		"commits":           fieldFunc(func(a map[string]any) any { return connection([]obj{q.commit(key, p)}, a) }),
		"statusCheckRollup": fieldFunc(func(a map[string]any) any { return q.commit(key, p)["commit"].(obj)["statusCheckRollup"] }),
	} {
		o[k] = v
	}
	return o
}

// commit is a pull request's head commit, as a PullRequestCommit node.
func (q *query) commit(key string, p Pull) obj {
	var contexts []obj
	for _, c := range p.Checks {
		var conclusion any
		if c.Conclusion != "" {
			conclusion = c.Conclusion
		}
		contexts = append(contexts, obj{
			"__typename": "CheckRun", "name": c.Name, "status": c.Status, "conclusion": conclusion,
			"startedAt": stamp(p.UpdatedAt), "completedAt": stamp(p.UpdatedAt),
			"detailsUrl": q.s.url(key + "/actions/runs/100"),
			"checkSuite": obj{"workflowRun": obj{"workflow": obj{"name": "CI"}}},
		})
	}
	rollup := obj{"__typename": "StatusCheckRollup", "state": rollupState(p.Checks),
		"contexts": fieldFunc(func(a map[string]any) any { return connection(contexts, a) })}
	h := oid(key + p.HeadRefName)
	return obj{"__typename": "PullRequestCommit", "commit": obj{
		"__typename": "Commit", "oid": h, "statusCheckRollup": rollup,
		"messageHeadline": p.Title, "messageBody": "", "committedDate": stamp(p.UpdatedAt), "authoredDate": stamp(p.UpdatedAt),
		"authors": fieldFunc(func(a map[string]any) any {
			return connection([]obj{{"name": p.Author, "email": p.Author + "@example.com", "user": q.user(p.Author)}}, a)
		}),
	}}
}

func rollupState(checks []Check) string {
	state := "SUCCESS"
	for _, c := range checks {
		switch {
		case c.Conclusion == "FAILURE":
			return "FAILURE"
		case c.Status != "COMPLETED":
			state = "PENDING"
		}
	}
	return state
}

func (q *query) reviews(key string, p Pull) []obj {
	var out []obj
	for i, r := range p.Reviews {
		out = append(out, obj{
			"__typename": "PullRequestReview", "id": fmt.Sprintf("PRR:%s:%d:%d", key, p.Number, i),
			"author": q.user(r.Author), "authorAssociation": "MEMBER", "submittedAt": stamp(r.SubmittedAt),
			"body": r.Body, "state": r.State, "commit": obj{"oid": oid(key + p.HeadRefName)}, "reactionGroups": []obj{},
		})
	}
	return out
}

func (q *query) comments(key string, n int, list []Comment) []obj {
	var out []obj
	for i, c := range list {
		out = append(out, obj{
			"__typename": "IssueComment", "id": fmt.Sprintf("IC:%s:%d:%d", key, n, i),
			"author": q.user(c.Author), "authorAssociation": "MEMBER", "body": c.Body,
			"createdAt": stamp(c.CreatedAt), "includesCreatedEdit": false, "isMinimized": false,
			"minimizedReason": "", "reactionGroups": []obj{}, "viewerDidAuthor": c.Author == Login,
			"url": q.s.url(fmt.Sprintf("%s/issues/%d#issuecomment-%d", key, n, i+1)),
		})
	}
	return out
}

func labelObjs(names []string) []obj {
	var out []obj
	for _, l := range names {
		out = append(out, obj{"__typename": "Label", "id": "L:" + l, "name": l, "description": "", "color": "ededed"})
	}
	return out
}

// connection is a GitHub connection over nodes, cut by first or last.
func connection(nodes []obj, a map[string]any) obj {
	total := len(nodes)
	if n := num(a["first"]); n > 0 && n < len(nodes) {
		nodes = nodes[:n]
	}
	if n := num(a["last"]); n > 0 && n < len(nodes) {
		nodes = nodes[len(nodes)-n:]
	}
	if nodes == nil {
		nodes = []obj{}
	}
	edges := make([]obj, len(nodes))
	for i, n := range nodes {
		edges[i] = obj{"node": n, "cursor": strconv.Itoa(i)}
	}
	return obj{
		"__typename": "Connection", "nodes": nodes, "edges": edges, "totalCount": total,
		"pageInfo": obj{"hasNextPage": false, "hasPreviousPage": false, "endCursor": "", "startCursor": ""},
	}
}

// node resolves the ids this fake hands out: "Type:owner/name[:number]".
func (q *query) node(id string) any {
	parts := strings.Split(id, ":")
	switch {
	case len(parts) == 2 && parts[0] == "R":
		return q.repositoryByName(splitKey(parts[1]))
	case len(parts) == 3 && parts[0] == "PullRequest":
		if p := q.findPull(parts[1], num(parts[2])); p != nil {
			return q.pull(parts[1], *p)
		}
	case len(parts) == 3 && parts[0] == "Issue":
		if i := q.findIssue(parts[1], num(parts[2])); i != nil {
			return q.issue(parts[1], *i)
		}
	}
	q.fail("NOT_FOUND", "node", "Could not resolve to a node with the global id of '%s'", id)
	return nil
}

// hit is one search result: an issue or a pull request.
type hit struct {
	key   string
	issue *Issue
	pull  *Pull
}

func (h hit) number() int {
	if h.issue != nil {
		return h.issue.Number
	}
	return h.pull.Number
}

// searchHits answers an issue search as GitHub reads its query:
// "repo:owner/name" terms pin the repository, "is:issue"/"is:pr" (or type:)
// the kind, other qualifiers are ignored, and the remaining words must all
// appear in the title or body, ignoring case. Newest first.
func (q *query) searchHits(raw string) []hit {
	var repos, words []string
	kind := ""
	for _, term := range strings.Fields(raw) {
		switch {
		case strings.HasPrefix(term, "repo:"):
			repos = append(repos, strings.TrimPrefix(term, "repo:"))
		case term == "is:issue" || term == "is:pr" || term == "type:issue" || term == "type:pr":
			kind = term[strings.Index(term, ":")+1:]
		case strings.Contains(term, ":"):
			// Other qualifiers (sort:, state:, in:) do not filter here.
		default:
			words = append(words, strings.ToLower(strings.Trim(term, `"`)))
		}
	}
	var found []hit
	for _, key := range repos {
		for i, is := range q.s.Data.Issues[key] {
			if kind != "pr" && matches(words, is.Title, is.Body) {
				found = append(found, hit{key: key, issue: &q.s.Data.Issues[key][i]})
			}
		}
		for i, p := range q.s.Data.Pulls[key] {
			if kind != "issue" && matches(words, p.Title, p.Body) {
				found = append(found, hit{key: key, pull: &q.s.Data.Pulls[key][i]})
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].number() > found[j].number() })
	return found
}

// search is the GraphQL search field (type ISSUE).
func (q *query) search(a map[string]any) any {
	var found []obj
	for _, h := range q.searchHits(str(a["query"])) {
		if h.issue != nil {
			found = append(found, q.issue(h.key, *h.issue))
		} else {
			found = append(found, q.pull(h.key, *h.pull))
		}
	}
	c := connection(found, a)
	c["issueCount"] = len(found)
	return c
}

func matches(words []string, title, body string) bool {
	text := strings.ToLower(title + "\n" + body)
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

func splitKey(key string) (string, string) {
	owner, name, _ := strings.Cut(key, "/")
	return owner, name
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int {
	switch v := v.(type) {
	case float64:
		return int(v)
	case int:
		return v
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func closedAt(closed bool, t time.Time) any {
	if !closed {
		return nil
	}
	return stamp(t)
}

// oid is a stable fake commit id for a name.
func oid(name string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return fmt.Sprintf("%016x%016x%08x", h, h^0x5bd1e995, uint32(h))
}
