package fakegithub

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

const ghBinary = "/usr/bin/gh"

// needGH skips when gh is not installed, unless GATEHOUSE_GH_TESTS=1 asks
// for these tests, and then a missing gh fails.
func needGH(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(ghBinary); err != nil {
		if os.Getenv("GATEHOUSE_GH_TESTS") == "1" {
			t.Fatalf("GATEHOUSE_GH_TESTS=1 but %s is missing: install Debian's gh package", ghBinary)
		}
		t.Skipf("%s is missing (Debian's gh package); set GATEHOUSE_GH_TESTS=1 to make this a failure", ghBinary)
	}
}

// gh runs the real gh against s in an empty folder (no git repository
// around it) with stdin, and returns its stdout, stderr and error.
func gh(t *testing.T, s *Server, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ghBinary, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = s.Env(t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func mustGH(t *testing.T, s *Server, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := gh(t, s, stdin, args...)
	if err != nil {
		t.Fatalf("gh %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func decode[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("gh printed no JSON: %v\n%s", err, out)
	}
	return v
}

type item struct {
	Number        int
	Title, Body   string
	State         string
	URL           string
	IsDraft       bool
	IsPullRequest bool
	Author        struct{ Login string }
	Labels        []struct{ Name string }
	Comments      []struct {
		Author struct{ Login string }
		Body   string
	}
	HeadRefName, BaseRefName string
	Mergeable                string
	ReviewDecision           string
	StatusCheckRollup        []struct{ Name, Status, Conclusion string }
	Reviews                  []struct {
		Author      struct{ Login string }
		State, Body string
	}
	HeadRepositoryOwner struct{ Login string }
	IsCrossRepository   bool
}

func numbers(items []item) []int {
	var n []int
	for _, i := range items {
		n = append(n, i.Number)
	}
	return n
}

func operations(s *Server) []string {
	var ops []string
	for _, r := range s.Requests() {
		if r.Operation != "" {
			ops = append(ops, r.Operation)
		} else {
			ops = append(ops, r.Method+" "+r.Path)
		}
	}
	return ops
}

func TestRepoListAndView(t *testing.T) {
	needGH(t)
	s := Start(t)
	repos := decode[[]struct {
		NameWithOwner, Description, URL, UpdatedAt string
		IsPrivate                                  bool
	}](t, mustGH(t, s, "", "repo", "list", "--json", "nameWithOwner,description,isPrivate,updatedAt,url", "--limit", "50"))
	if len(repos) != 1 || repos[0].NameWithOwner != "octo/hello" || repos[0].Description != "Hello, world" ||
		repos[0].URL != "https://"+s.Host+"/octo/hello" || repos[0].UpdatedAt == "" || repos[0].IsPrivate {
		t.Errorf("repo list = %+v", repos)
	}
	repo := decode[struct {
		NameWithOwner                                              string
		DefaultBranchRef                                           struct{ Name string }
		MergeCommitAllowed, SquashMergeAllowed, RebaseMergeAllowed bool
	}](t, mustGH(t, s, "", "repo", "view", s.RepoFlag("octo/hello"), "--json",
		"nameWithOwner,defaultBranchRef,mergeCommitAllowed,squashMergeAllowed,rebaseMergeAllowed"))
	if repo.NameWithOwner != "octo/hello" || repo.DefaultBranchRef.Name != "main" ||
		!repo.MergeCommitAllowed || !repo.SquashMergeAllowed || repo.RebaseMergeAllowed {
		t.Errorf("repo view = %+v", repo)
	}
	want := []string{"Repository_fields", "RepositoryList", "RepositoryInfo"}
	if got := operations(s); !slices.Equal(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
}

func TestLists(t *testing.T) {
	needGH(t)
	s := Start(t)
	R := s.RepoFlag("octo/hello")
	issues := decode[[]item](t, mustGH(t, s, "", "issue", "list", "--repo", R, "--json",
		"number,title,state,author,updatedAt,labels,comments", "--limit", "30", "--state", "all"))
	if got := numbers(issues); !slices.Equal(got, []int{2, 1}) {
		t.Errorf("issue numbers = %v", got)
	}
	if i := issues[1]; i.State != "OPEN" || i.Author.Login != "alice" || len(i.Labels) != 1 || i.Labels[0].Name != "bug" ||
		len(i.Comments) != 1 || i.Comments[0].Body != "Can you share the log?" {
		t.Errorf("issue #1 = %+v", i)
	}
	pulls := decode[[]item](t, mustGH(t, s, "", "pr", "list", "-R", R, "--json",
		"number,title,state,author,headRefName,baseRefName,isDraft,updatedAt,reviewDecision", "--limit", "30", "--state", "all"))
	if got := numbers(pulls); !slices.Equal(got, []int{5, 4, 3}) {
		t.Errorf("pull numbers = %v", got)
	}
	if p := pulls[2]; p.HeadRefName != "greeting" || p.BaseRefName != "main" || p.ReviewDecision != "APPROVED" || p.IsDraft {
		t.Errorf("pull 3 = %+v", p)
	}
	if !pulls[1].IsDraft {
		t.Errorf("pull 4 is not a draft: %+v", pulls[1])
	}
	runs := decode[[]struct {
		DatabaseID                                                 int64
		DisplayTitle, Status, Conclusion, WorkflowName, HeadBranch string
		Event, CreatedAt                                           string
	}](t, mustGH(t, s, "", "run", "list", "-R", R, "--json",
		"databaseId,displayTitle,status,conclusion,workflowName,headBranch,event,createdAt", "--limit", "30"))
	if len(runs) != 2 || runs[0].DatabaseID != 101 || runs[1].DatabaseID != 100 || runs[1].WorkflowName != "CI" ||
		runs[1].Conclusion != "failure" || runs[1].Event != "pull_request" || runs[0].Status != "in_progress" {
		t.Errorf("runs = %+v", runs)
	}
	want := []string{"Issue_fields", "IssueList", "PullRequestList",
		"GET /api/v3/repos/octo/hello/actions/runs", "GET /api/v3/repos/octo/hello/actions/workflows"}
	if got := operations(s); !slices.Equal(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
	if r := s.Requests()[2]; !slices.Equal(r.Variables["state"].([]any), []any{"OPEN", "CLOSED", "MERGED"}) {
		t.Errorf("PullRequestList variables = %v", r.Variables)
	}
}

func TestIssueView(t *testing.T) {
	needGH(t)
	s := Start(t)
	i := decode[item](t, mustGH(t, s, "", "issue", "view", "1", "-R", s.RepoFlag("octo/hello"), "--json",
		"number,title,body,state,author,labels,comments,createdAt,updatedAt,url"))
	if i.Number != 1 || i.Title != "Crash on start" || i.Body != "It crashes when started twice." ||
		i.URL != "https://"+s.Host+"/octo/hello/issues/1" || len(i.Comments) != 1 || i.Comments[0].Author.Login != "octo" {
		t.Errorf("issue view = %+v", i)
	}
	if got := operations(s); !slices.Equal(got, []string{"IssueByNumber", "CommentsForIssue"}) {
		t.Errorf("requests = %q", got)
	}
}

func TestPullView(t *testing.T) {
	needGH(t)
	s := Start(t)
	p := decode[item](t, mustGH(t, s, "", "pr", "view", "3", "-R", s.RepoFlag("octo/hello"), "--json",
		"number,title,body,state,author,headRefName,baseRefName,isDraft,mergeable,reviewDecision,statusCheckRollup,reviews,comments,url"))
	if p.Number != 3 || p.State != "OPEN" || p.Mergeable != "MERGEABLE" || p.ReviewDecision != "APPROVED" ||
		p.URL != "https://"+s.Host+"/octo/hello/pull/3" || len(p.Comments) != 1 {
		t.Errorf("pr view = %+v", p)
	}
	checks := p.StatusCheckRollup
	if len(checks) != 2 || checks[0].Name != "build" || checks[0].Conclusion != "SUCCESS" ||
		checks[1].Name != "lint" || checks[1].Conclusion != "FAILURE" || checks[1].Status != "COMPLETED" {
		t.Errorf("checks = %+v", checks)
	}
	if len(p.Reviews) != 1 || p.Reviews[0].State != "APPROVED" || p.Reviews[0].Author.Login != "bob" {
		t.Errorf("reviews = %+v", p.Reviews)
	}
	if got := operations(s); !slices.Equal(got, []string{"PullRequestByNumber"}) {
		t.Errorf("requests = %q", got)
	}
}

func TestForkPull(t *testing.T) {
	needGH(t)
	s := Start(t)
	p := decode[item](t, mustGH(t, s, "", "pr", "view", "5", "-R", s.RepoFlag("octo/hello"), "--json",
		"number,headRefName,baseRefName,headRepositoryOwner,isCrossRepository"))
	if p.HeadRepositoryOwner.Login != ForkOwner || !p.IsCrossRepository || p.HeadRefName != "main" || p.BaseRefName != "main" {
		t.Errorf("fork pull = %+v", p)
	}
}

func TestRunView(t *testing.T) {
	needGH(t)
	s := Start(t)
	run := decode[struct {
		DatabaseID                      int64
		DisplayTitle, WorkflowName, URL string
		Status, Conclusion, Event       string
		Jobs                            []struct{ Name, Status, Conclusion string }
	}](t, mustGH(t, s, "", "run", "view", "100", "-R", s.RepoFlag("octo/hello"), "--json",
		"databaseId,displayTitle,status,conclusion,workflowName,headBranch,event,createdAt,jobs,url"))
	if run.DatabaseID != 100 || run.WorkflowName != "CI" || run.Conclusion != "failure" ||
		run.URL != "https://"+s.Host+"/octo/hello/actions/runs/100" || len(run.Jobs) != 2 ||
		run.Jobs[1].Name != "lint" || run.Jobs[1].Conclusion != "failure" {
		t.Errorf("run view = %+v", run)
	}
	want := []string{"GET /api/v3/repos/octo/hello/actions/runs/100", "GET /api/v3/repos/octo/hello/actions/workflows/1000",
		"GET /api/v3/repos/octo/hello/actions/runs/100/jobs"}
	if got := operations(s); !slices.Equal(got, want) {
		t.Errorf("requests = %q", got)
	}
}

func TestSearch(t *testing.T) {
	needGH(t)
	s := Start(t)
	search := func(words string) []item {
		return decode[[]item](t, mustGH(t, s, "", "search", "issues", "--repo", "octo/hello", "--include-prs", "--json",
			"number,title,state,author,isPullRequest,updatedAt,url", "--limit", "30", words))
	}
	if got := search("greet"); len(got) != 1 || got[0].Number != 3 || !got[0].IsPullRequest || got[0].State != "open" {
		t.Errorf("search greet = %+v", got)
	}
	if got := search("CRASH"); len(got) != 1 || got[0].Number != 1 || got[0].IsPullRequest || got[0].Author.Login != "alice" {
		t.Errorf("search CRASH = %+v", got)
	}
	if got := search("nothing-matches-this"); len(got) != 0 {
		t.Errorf("search for nothing = %+v", got)
	}
	if r := s.Requests()[0]; r.Path != "/api/v3/search/issues" {
		t.Errorf("search request = %+v", r)
	}
}

func TestComment(t *testing.T) {
	needGH(t)
	s := Start(t)
	R := s.RepoFlag("octo/hello")
	out := mustGH(t, s, "first line\nsecond", "issue", "comment", "1", "-R", R, "--body-file", "-")
	if want := "https://" + s.Host + "/octo/hello/issues/1#issuecomment-2"; strings.TrimSpace(out) != want {
		t.Errorf("issue comment printed %q, want %q", out, want)
	}
	out = mustGH(t, s, "on the pull", "issue", "comment", "3", "-R", R, "--body-file", "-")
	if !strings.Contains(out, "/octo/hello/pull/3#issuecomment-2") {
		t.Errorf("pull comment printed %q", out)
	}
	mustGH(t, s, "through pr comment", "pr", "comment", "3", "-R", R, "--body-file", "-")
	s.Mu.Lock()
	issue := s.Data.Issues["octo/hello"][0]
	pull := s.Data.Pulls["octo/hello"][0]
	s.Mu.Unlock()
	if c := issue.Comments[len(issue.Comments)-1]; len(issue.Comments) != 2 || c.Body != "first line\nsecond" || c.Author != Login {
		t.Errorf("issue comments = %+v", issue.Comments)
	}
	if len(pull.Comments) != 3 || pull.Comments[1].Body != "on the pull" || pull.Comments[2].Body != "through pr comment" {
		t.Errorf("pull comments = %+v", pull.Comments)
	}
	want := []string{"IssueByNumber", "CommentCreate", "IssueByNumber", "CommentCreate", "PullRequestByNumber", "CommentCreate"}
	if got := operations(s); !slices.Equal(got, want) {
		t.Errorf("requests = %q", got)
	}
}

func TestPullDiff(t *testing.T) {
	needGH(t)
	s := Start(t)
	out := mustGH(t, s, "", "pr", "diff", "3", "-R", s.RepoFlag("octo/hello"), "--color=never")
	if out != defaultDiff || !strings.Contains(out, "+++ b/README.md") || !strings.Contains(out, "+++ b/.env") {
		t.Errorf("pr diff printed %q", out)
	}
	if got := operations(s); !slices.Equal(got, []string{"GET /api/v3/repos/octo/hello/pulls/3"}) {
		t.Errorf("requests = %q", got)
	}
}

func TestPullReview(t *testing.T) {
	needGH(t)
	s := Start(t)
	R := s.RepoFlag("octo/hello")
	mustGH(t, s, "", "pr", "review", "4", "-R", R, "--approve")
	mustGH(t, s, "please rename", "pr", "review", "3", "-R", R, "--request-changes", "--body-file", "-")
	mustGH(t, s, "just a note", "pr", "review", "5", "-R", R, "--comment", "--body-file", "-")
	s.Mu.Lock()
	pulls := append([]Pull(nil), s.Data.Pulls["octo/hello"]...)
	s.Mu.Unlock()
	for i, want := range []Review{{Author: Login, State: "CHANGES_REQUESTED", Body: "please rename"},
		{Author: Login, State: "APPROVED"}, {Author: Login, State: "COMMENTED", Body: "just a note"}} {
		rs := pulls[i].Reviews
		if len(rs) == 0 || rs[len(rs)-1].State != want.State || rs[len(rs)-1].Body != want.Body || rs[len(rs)-1].Author != Login {
			t.Errorf("pull %d reviews = %+v, want last %+v", pulls[i].Number, rs, want)
		}
	}
	if pulls[0].ReviewDecision != "CHANGES_REQUESTED" || pulls[1].ReviewDecision != "APPROVED" {
		t.Errorf("review decisions = %q, %q", pulls[0].ReviewDecision, pulls[1].ReviewDecision)
	}
	for _, r := range s.Requests() {
		if r.Operation == "PullRequestReviewAdd" {
			return
		}
	}
	t.Errorf("no PullRequestReviewAdd in %q", operations(s))
}

func TestPullMerge(t *testing.T) {
	needGH(t)
	s := Start(t)
	R := s.RepoFlag("octo/hello")
	_, errOut, err := gh(t, s, "", "pr", "merge", "3", "-R", R, "--rebase")
	if err == nil || !strings.Contains(errOut, "Rebase merges are not allowed on this repository.") {
		t.Errorf("rebase merge: err %v, stderr %q; want GitHub's refusal", err, errOut)
	}
	s.Mu.Lock()
	state := s.Data.Pulls["octo/hello"][0].State
	s.Mu.Unlock()
	if state != "OPEN" {
		t.Fatalf("a refused merge changed the state to %s", state)
	}
	_, errOut, err = gh(t, s, "", "pr", "merge", "4", "-R", R, "--merge")
	if err == nil || !strings.Contains(errOut, "Pull Request is still a draft") {
		t.Errorf("draft merge: err %v, stderr %q; want GitHub's refusal", err, errOut)
	}
	mustGH(t, s, "", "pr", "merge", "3", "-R", R, "--squash")
	mustGH(t, s, "", "pr", "merge", "5", "-R", R, "--merge")
	s.Mu.Lock()
	p3, p5 := s.Data.Pulls["octo/hello"][0], s.Data.Pulls["octo/hello"][2]
	s.Mu.Unlock()
	if p3.State != "MERGED" || p3.MergedWith != "squash" || p5.State != "MERGED" || p5.MergedWith != "merge" {
		t.Errorf("after merges: #3 %s/%s, #5 %s/%s", p3.State, p3.MergedWith, p5.State, p5.MergedWith)
	}
	var merges []string
	for _, r := range s.Requests() {
		if r.Operation == "PullRequestMerge" {
			merges = append(merges, r.Variables["input"].(map[string]any)["mergeMethod"].(string))
		}
	}
	if !slices.Equal(merges, []string{"REBASE", "MERGE", "SQUASH", "MERGE"}) {
		t.Errorf("merge methods sent = %q (requests %q)", merges, operations(s))
	}
	p := decode[item](t, mustGH(t, s, "", "pr", "view", "3", "-R", R, "--json", "state"))
	if p.State != "MERGED" {
		t.Errorf("pr view after merge: state %q", p.State)
	}
}

func TestPullCreate(t *testing.T) {
	needGH(t)
	s := Start(t)
	out := mustGH(t, s, "what it does", "pr", "create", "-R", s.RepoFlag("octo/hello"),
		"--head", "feature", "--base", "main", "--title", "New feature", "--body-file", "-")
	if want := "https://" + s.Host + "/octo/hello/pull/6"; strings.TrimSpace(out) != want {
		t.Errorf("pr create printed %q, want %q", out, want)
	}
	s.Mu.Lock()
	pulls := s.Data.Pulls["octo/hello"]
	p := pulls[len(pulls)-1]
	s.Mu.Unlock()
	if p.Number != 6 || p.Title != "New feature" || p.Body != "what it does" || p.HeadRefName != "feature" ||
		p.BaseRefName != "main" || p.State != "OPEN" || p.Author != Login {
		t.Errorf("created pull = %+v", p)
	}
	want := []string{"RepositoryInfo", "PullRequestForBranch", "PullRequestCreate"}
	if got := operations(s); !slices.Equal(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
	out = mustGH(t, s, "", "pr", "create", "-R", s.RepoFlag("octo/hello"),
		"--head", ForkOwner+":fix", "--base", "main", "--title", "From the fork", "--body-file", "-")
	s.Mu.Lock()
	fork := s.Data.Pulls["octo/hello"][len(s.Data.Pulls["octo/hello"])-1]
	s.Mu.Unlock()
	if !strings.HasSuffix(strings.TrimSpace(out), "/pull/7") || fork.HeadOwner != ForkOwner || fork.HeadRefName != "fix" {
		t.Errorf("fork pull: printed %q, created %+v", out, fork)
	}
	_, errOut, err := gh(t, s, "again", "pr", "create", "-R", s.RepoFlag("octo/hello"),
		"--head", "feature", "--base", "main", "--title", "Again", "--body-file", "-")
	if err == nil || !strings.Contains(errOut, "already exists") {
		t.Errorf("second create: err %v, stderr %q", err, errOut)
	}
}

func TestAuth(t *testing.T) {
	needGH(t)
	s := Start(t)
	_, errOut, err := gh(t, s, "", "auth", "status")
	if err != nil || !strings.Contains(errOut, "Logged in to "+s.Host+" as octo") {
		t.Errorf("auth status: %v\n%s", err, errOut)
	}
	user := decode[struct{ Login string }](t, mustGH(t, s, "", "api", "user"))
	if user.Login != Login {
		t.Errorf("api user = %+v", user)
	}
	cmd := exec.Command(ghBinary, "issue", "list", "-R", s.RepoFlag("octo/hello"), "--json", "number")
	cmd.Dir = t.TempDir()
	for _, kv := range s.Env(t.TempDir()) {
		if strings.HasPrefix(kv, "GH_ENTERPRISE_TOKEN=") {
			kv = "GH_ENTERPRISE_TOKEN=wrong"
		}
		cmd.Env = append(cmd.Env, kv)
	}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "401") {
		t.Errorf("a wrong token: err %v, output %q; want HTTP 401", err, out)
	}
	if r := s.Requests(); r[len(r)-1].Operation != "" {
		t.Errorf("a request without the token was parsed: %+v", r[len(r)-1])
	}
}

// TestRepoForms pins the --repo spellings gh 2.23 sends to a host with a
// port. "https://127.0.0.1:PORT/owner/name" is not one of them: gh drops the
// port from a URL and dials 127.0.0.1:443.
func TestRepoForms(t *testing.T) {
	needGH(t)
	s := Start(t)
	for _, repo := range []string{s.RepoFlag("octo/hello"), "octo/hello"} {
		p := decode[item](t, mustGH(t, s, "", "pr", "view", "3", "-R", repo, "--json", "title"))
		if p.Title != "Add greeting" {
			t.Errorf("-R %s: %+v", repo, p)
		}
	}
}

func TestNotFound(t *testing.T) {
	needGH(t)
	s := Start(t)
	for args, want := range map[string]string{
		"issue view 99 -R " + s.RepoFlag("octo/hello") + " --json title": "GraphQL: Could not resolve to an issue or pull request with the number of 99.",
		"repo view " + s.RepoFlag("octo/nope") + " --json name":          "GraphQL: Could not resolve to a Repository with the name 'octo/nope'.",
	} {
		_, errOut, err := gh(t, s, "", strings.Fields(args)...)
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("gh %s: err %v, stderr %q, want %q", args, err, errOut, want)
		}
	}
}

func TestUnknownRequestIs404(t *testing.T) {
	needGH(t)
	s := Start(t)
	_, errOut, err := gh(t, s, "", "api", "repos/octo/hello/deployments")
	if err == nil || !strings.Contains(errOut, "404") {
		t.Errorf("unknown request: err %v, stderr %q", err, errOut)
	}
}

func TestEnvHasNothingOfTheUser(t *testing.T) {
	s := Start(t)
	env := s.Env("/cfg")
	realHome, _ := os.UserHomeDir()
	for _, want := range []string{"GH_HOST=" + s.Host, "GH_ENTERPRISE_TOKEN=" + s.Token, "SSL_CERT_FILE=" + s.CAFile,
		"GH_CONFIG_DIR=/cfg", "GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1", "NO_COLOR=1", "GH_PAGER=cat"} {
		if !slices.Contains(env, want) {
			t.Errorf("Env lacks %q: %q", want, env)
		}
	}
	for _, kv := range env {
		if realHome != "" && strings.HasPrefix(kv, "HOME=") && kv == "HOME="+realHome {
			t.Errorf("Env passes the real HOME: %q", kv)
		}
	}
}

func TestParseDocument(t *testing.T) {
	doc, err := parseDocument(`query Q($n: Int!) {a: repository(owner: "o", name: $n) {
		__typename...on PullRequest{x,y} ...F, list(states: [OPEN, CLOSED], f: {k: -1.5})}}
		fragment F on Issue { z }`, map[string]any{"n": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if doc.kind != "query" || doc.name != "Q" || len(doc.sel) != 1 {
		t.Fatalf("doc = %+v", doc)
	}
	repo := doc.sel[0]
	if repo.alias != "a" || repo.name != "repository" || repo.args["name"] != "hello" || repo.args["owner"] != "o" {
		t.Errorf("field = %+v", repo)
	}
	kids := repo.children
	if len(kids) != 4 || kids[1].onType != "PullRequest" || !kids[2].fragment || kids[2].children[0].name != "z" {
		t.Errorf("children = %+v", kids)
	}
	if got := kids[3].args["states"]; !slices.Equal(got.([]any), []any{"OPEN", "CLOSED"}) {
		t.Errorf("states = %v", got)
	}
	for _, bad := range []string{`{`, `query { a(b: "x) }`, `{ ...Missing }`, `query { a(: 1) }`,
		strings.Repeat("{a", maxDepth+1) + strings.Repeat("}", maxDepth+1),
		"{a(b: " + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + ")}"} {
		if _, err := parseDocument(bad, nil); err == nil {
			t.Errorf("parseDocument(%q) accepted", bad)
		}
	}
}
