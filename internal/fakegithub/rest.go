package fakegithub

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// serveREST answers the REST calls gh makes: the API root and the user for
// its sign-in checks, a pull request's diff, and Actions runs, jobs and
// workflows. Anything else is unknown.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	s.record(Request{Method: r.Method, Path: r.URL.Path})
	path, ok := strings.CutPrefix(r.URL.Path, "/api/v3")
	if !ok || r.Method != http.MethodGet {
		s.unknown(w, r.Method+" "+r.URL.String())
		return
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	s.Mu.Lock()
	defer s.Mu.Unlock()
	switch {
	case path == "/" || path == "":
		writeJSON(w, http.StatusOK, map[string]any{"current_user_url": s.url("api/v3/user")})
	case path == "/user":
		writeJSON(w, http.StatusOK, map[string]any{"login": Login, "id": 1, "type": "User", "name": "Octo"})
	case path == "/search/issues":
		s.serveSearch(w, r.URL.Query().Get("q"))
	case len(parts) >= 3 && parts[0] == "repos":
		s.serveRepoREST(w, r, parts[1]+"/"+parts[2], parts[3:])
	default:
		s.unknown(w, r.Method+" "+r.URL.String())
	}
}

func (s *Server) serveRepoREST(w http.ResponseWriter, r *http.Request, key string, rest []string) {
	q := &query{s: s}
	if _, ok := q.findRepo(splitKey(key)); !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	route := strings.Join(rest, "/")
	switch {
	case len(rest) == 2 && rest[0] == "pulls":
		s.servePullDiff(w, r, q, key, num(rest[1]))
	case route == "actions/runs":
		s.serveRuns(w, key)
	case len(rest) == 3 && route == "actions/runs/"+rest[2]:
		s.serveRun(w, key, rest[2])
	case len(rest) == 4 && rest[0] == "actions" && rest[1] == "runs" && rest[3] == "jobs":
		s.serveJobs(w, key, rest[2])
	case route == "actions/workflows":
		s.serveWorkflows(w, key)
	case len(rest) == 3 && rest[0] == "actions" && rest[1] == "workflows":
		s.serveWorkflow(w, key, num(rest[2]))
	case route == "branches":
		s.serveBranches(w, key)
	case len(rest) == 4 && rest[0] == "actions" && rest[1] == "jobs" && rest[3] == "logs":
		s.serveJobLog(w, key, num(rest[2]))
	case len(rest) == 4 && rest[0] == "check-runs" && rest[3] == "annotations":
		writeJSON(w, http.StatusOK, []any{})
	default:
		s.unknown(w, r.Method+" "+r.URL.String())
	}
}

func (s *Server) servePullDiff(w http.ResponseWriter, r *http.Request, q *query, key string, n int) {
	p := q.findPull(key, n)
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "diff") {
		s.unknown(w, "pull request as JSON: "+r.URL.String())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(p.Diff))
}

// workflowID numbers the repository's workflows by first appearance.
func (s *Server) workflows(key string) []string {
	var names []string
	seen := map[string]bool{}
	for _, run := range s.Data.Runs[key] {
		if !seen[run.WorkflowName] {
			seen[run.WorkflowName] = true
			names = append(names, run.WorkflowName)
		}
	}
	return names
}

func (s *Server) workflowJSON(key string, i int, name string) map[string]any {
	file := strings.ToLower(strings.ReplaceAll(name, " ", "-")) + ".yml"
	return map[string]any{"id": 1000 + i, "name": name, "path": ".github/workflows/" + file, "state": "active",
		"html_url": s.url(key + "/actions/workflows/" + file)}
}

func (s *Server) serveWorkflows(w http.ResponseWriter, key string) {
	var list []map[string]any
	for i, name := range s.workflows(key) {
		list = append(list, s.workflowJSON(key, i, name))
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "workflows": list})
}

func (s *Server) serveWorkflow(w http.ResponseWriter, key string, id int) {
	names := s.workflows(key)
	if id < 1000 || id-1000 >= len(names) {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	writeJSON(w, http.StatusOK, s.workflowJSON(key, id-1000, names[id-1000]))
}

func (s *Server) runJSON(key string, run Run) map[string]any {
	wf := 0
	for i, name := range s.workflows(key) {
		if name == run.WorkflowName {
			wf = 1000 + i
		}
	}
	var conclusion any
	if run.Conclusion != "" {
		conclusion = run.Conclusion
	}
	h := oid(key + run.HeadBranch)
	return map[string]any{
		"id": run.DatabaseID, "name": run.Name, "display_title": run.DisplayTitle, "status": run.Status,
		"conclusion": conclusion, "event": run.Event, "head_branch": run.HeadBranch, "head_sha": h,
		"workflow_id": wf, "run_number": run.DatabaseID, "run_attempt": 1,
		"created_at": stamp(run.CreatedAt), "updated_at": stamp(run.CreatedAt), "run_started_at": stamp(run.CreatedAt),
		"html_url":        s.url(fmt.Sprintf("%s/actions/runs/%d", key, run.DatabaseID)),
		"jobs_url":        s.url(fmt.Sprintf("api/v3/repos/%s/actions/runs/%d/jobs", key, run.DatabaseID)),
		"head_commit":     map[string]any{"id": h, "message": run.DisplayTitle},
		"head_repository": map[string]any{"full_name": key, "owner": map[string]any{"login": strings.Split(key, "/")[0]}},
	}
}

func (s *Server) serveRuns(w http.ResponseWriter, key string) {
	runs := append([]Run(nil), s.Data.Runs[key]...)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].CreatedAt.After(runs[j].CreatedAt) })
	list := []map[string]any{}
	for _, run := range runs {
		list = append(list, s.runJSON(key, run))
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "workflow_runs": list})
}

func (s *Server) findRun(key, id string) *Run {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	for i := range s.Data.Runs[key] {
		if s.Data.Runs[key][i].DatabaseID == n {
			return &s.Data.Runs[key][i]
		}
	}
	return nil
}

func (s *Server) serveRun(w http.ResponseWriter, key, id string) {
	run := s.findRun(key, id)
	if run == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	writeJSON(w, http.StatusOK, s.runJSON(key, *run))
}

func (s *Server) serveJobs(w http.ResponseWriter, key, id string) {
	run := s.findRun(key, id)
	if run == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	jobs := []map[string]any{}
	for _, j := range run.Jobs {
		var conclusion any
		if j.Conclusion != "" {
			conclusion = j.Conclusion
		}
		jobs = append(jobs, map[string]any{
			"id": j.ID, "run_id": run.DatabaseID, "name": j.Name, "status": j.Status, "conclusion": conclusion,
			"started_at": stamp(run.CreatedAt), "completed_at": stamp(run.CreatedAt), "steps": steps(j.Steps),
			"html_url": s.url(fmt.Sprintf("%s/actions/runs/%d/job/%d", key, run.DatabaseID, j.ID)),
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(jobs), "jobs": jobs})
}

// serveSearch answers GET /search/issues, which gh search issues uses.
func (s *Server) serveSearch(w http.ResponseWriter, raw string) {
	q := &query{s: s}
	items := []map[string]any{}
	for _, h := range q.searchHits(raw) {
		items = append(items, s.searchItem(h))
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(items), "incomplete_results": false, "items": items})
}

func (s *Server) searchItem(h hit) map[string]any {
	var item map[string]any
	if h.issue != nil {
		i := h.issue
		item = restIssue(s, h.key, "issues", i.Number, i.Title, i.Body, i.State, i.Author, i.Labels, len(i.Comments), i.CreatedAt, i.UpdatedAt)
	} else {
		p := h.pull
		state := p.State
		if state == "MERGED" {
			state = "CLOSED"
		}
		item = restIssue(s, h.key, "pull", p.Number, p.Title, p.Body, state, p.Author, p.Labels, len(p.Comments), p.CreatedAt, p.UpdatedAt)
		pr := map[string]any{"html_url": item["html_url"], "merged_at": nil}
		if p.State == "MERGED" {
			pr["merged_at"] = stamp(p.UpdatedAt)
		}
		item["pull_request"], item["draft"] = pr, p.IsDraft
	}
	return item
}

// restIssue is an issue as the REST API spells it (lowercase state, "user").
func restIssue(s *Server, key, kind string, n int, title, body, state, author string, labels []string, comments int, created, updated time.Time) map[string]any {
	var ls []map[string]any
	for _, l := range labels {
		ls = append(ls, map[string]any{"name": l, "node_id": "L:" + l, "color": "ededed", "description": ""})
	}
	return map[string]any{
		"number": n, "title": title, "body": body, "state": strings.ToLower(state), "node_id": fmt.Sprintf("%s:%d", key, n),
		"user":     map[string]any{"login": author, "node_id": "U_" + author, "type": "User", "html_url": s.url(author)},
		"html_url": s.url(fmt.Sprintf("%s/%s/%d", key, kind, n)), "repository_url": s.url("api/v3/repos/" + key),
		"labels": ls, "comments": comments, "created_at": stamp(created), "updated_at": stamp(updated),
		"closed_at": closedAt(state != "OPEN", updated), "locked": false, "assignees": []any{}, "author_association": "MEMBER",
	}
}

func steps(list []Step) []map[string]any {
	out := []map[string]any{}
	for i, st := range list {
		out = append(out, map[string]any{"name": st.Name, "status": "completed", "conclusion": st.Conclusion, "number": i + 1})
	}
	return out
}

// serveBranches answers GET /repos/OWNER/NAME/branches: the default branch
// and the repository's Branches, one page.
func (s *Server) serveBranches(w http.ResponseWriter, key string) {
	repo, _ := (&query{s: s}).findRepo(splitKey(key))
	list := []map[string]any{}
	for _, b := range append([]string{repo.DefaultBranch}, repo.Branches...) {
		list = append(list, map[string]any{"name": b, "protected": false, "commit": map[string]any{"sha": oid(key + b)}})
	}
	writeJSON(w, http.StatusOK, list)
}

// serveJobLog answers GET /repos/OWNER/NAME/actions/jobs/ID/logs with the
// job's log as plain text (GitHub redirects to a download of the same), or
// the job's LogRefusal as a 403.
func (s *Server) serveJobLog(w http.ResponseWriter, key string, id int) {
	for _, run := range s.Data.Runs[key] {
		for _, j := range run.Jobs {
			if j.ID == int64(id) && j.LogRefusal != "" {
				writeJSON(w, http.StatusForbidden, map[string]any{"message": j.LogRefusal})
				return
			}
			if j.ID == int64(id) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				_, _ = w.Write([]byte(j.Log))
				return
			}
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
}
