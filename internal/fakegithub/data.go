package fakegithub

import "time"

// Data is everything the fake serves. Issue and pull request numbers share
// one sequence per repository, as on GitHub.
type Data struct {
	Repos  []Repo
	Issues map[string][]Issue // key "owner/name"
	Pulls  map[string][]Pull  // key "owner/name"
	Runs   map[string][]Run   // key "owner/name"
}

// Repo is a repository; the signed-in user owns those whose Owner is Login.
type Repo struct {
	Owner, Name   string
	Description   string
	Private       bool
	DefaultBranch string
	MergeAllowed  bool // merge commits
	SquashAllowed bool
	RebaseAllowed bool
	UpdatedAt     time.Time
	Branches      []string // besides DefaultBranch, served by GET branches
}

// NameWithOwner is "owner/name".
func (r Repo) NameWithOwner() string { return r.Owner + "/" + r.Name }

// Issue is an issue.
type Issue struct {
	Number               int
	Title, Body          string
	State                string // OPEN or CLOSED
	Author               string
	Labels               []string
	Comments             []Comment
	CreatedAt, UpdatedAt time.Time
}

// Comment is a comment on an issue or pull request.
type Comment struct {
	Author, Body string
	CreatedAt    time.Time
}

// Pull is a pull request.
type Pull struct {
	Number               int
	Title, Body          string
	State                string // OPEN, CLOSED or MERGED
	IsDraft              bool
	Author               string
	HeadRefName          string
	HeadOwner            string // owner of the head repository; "" means the base repository's owner
	BaseRefName          string
	Mergeable            string // MERGEABLE, CONFLICTING or UNKNOWN
	ReviewDecision       string // APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED or ""
	Checks               []Check
	Reviews              []Review
	Comments             []Comment
	Labels               []string
	Diff                 string // unified diff, served for gh pr diff
	MergedWith           string // merge, squash or rebase, set when merged
	MergeSubject         string // the merge commit's headline gh sent, if any
	MergeBody            string // the merge commit's body gh sent, if any
	CreatedAt, UpdatedAt time.Time
}

// Check is one check run on a pull request's head commit.
type Check struct {
	Name       string
	Status     string // QUEUED, IN_PROGRESS or COMPLETED
	Conclusion string // SUCCESS, FAILURE, ... or "" while running
}

// Review is a pull request review.
type Review struct {
	Author      string
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED
	Body        string
	SubmittedAt time.Time
}

// Run is a workflow run (GitHub Actions).
type Run struct {
	DatabaseID   int64
	DisplayTitle string
	Name         string
	WorkflowName string
	Status       string // queued, in_progress, completed (REST spelling)
	Conclusion   string // success, failure, ... or ""
	HeadBranch   string
	Event        string
	CreatedAt    time.Time
	Jobs         []Job
}

// Job is one job of a workflow run.
type Job struct {
	ID                 int64
	Name               string
	Status, Conclusion string
	Steps              []Step
	Log                string // served for GET actions/jobs/ID/logs
	// LogRefusal, when set, is the message of the 403 that GET
	// actions/jobs/ID/logs answers instead (gh prints it on stderr).
	LogRefusal string
}

// Step is one step of a job.
type Step struct {
	Name, Conclusion string
}

// ForkOwner owns the fork that DefaultData's pull request 5 comes from.
const ForkOwner = "forker"

// DefaultData is one repository, octo/hello (default branch main; merge and
// squash allowed, rebase not), with issues #1 and #2, pull requests 3 (checks
// success and failure, approved, a diff touching README.md and .env), 4 (a
// draft) and 5 (from the fork forker/hello), and runs 100 and 101 with jobs.
func DefaultData() *Data {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	const key = "octo/hello"
	return &Data{
		Repos: []Repo{{Owner: "octo", Name: "hello", Description: "Hello, world", DefaultBranch: "main",
			MergeAllowed: true, SquashAllowed: true, UpdatedAt: at(30), Branches: []string{"greeting", "refactor"}}},
		Issues: map[string][]Issue{key: {
			{Number: 1, Title: "Crash on start", Body: "It crashes when started twice.", State: "OPEN",
				Author: "alice", Labels: []string{"bug"}, CreatedAt: at(1), UpdatedAt: at(2),
				Comments: []Comment{{Author: "octo", Body: "Can you share the log?", CreatedAt: at(2)}}},
			{Number: 2, Title: "Document the settings", Body: "The settings file is not described.",
				State: "CLOSED", Author: "bob", CreatedAt: at(3), UpdatedAt: at(4)},
		}},
		Pulls: map[string][]Pull{key: {
			{Number: 3, Title: "Add greeting", Body: "Greets the user.", State: "OPEN", Author: "alice",
				HeadRefName: "greeting", BaseRefName: "main", Mergeable: "MERGEABLE", ReviewDecision: "APPROVED",
				Checks:    []Check{{"build", "COMPLETED", "SUCCESS"}, {"lint", "COMPLETED", "FAILURE"}},
				Reviews:   []Review{{Author: "bob", State: "APPROVED", Body: "Looks good", SubmittedAt: at(6)}},
				Comments:  []Comment{{Author: "bob", Body: "Nice one", CreatedAt: at(6)}},
				Diff:      defaultDiff,
				CreatedAt: at(5), UpdatedAt: at(6)},
			{Number: 4, Title: "WIP: refactor", Body: "Not ready.", State: "OPEN", IsDraft: true, Author: "octo",
				HeadRefName: "refactor", BaseRefName: "main", Mergeable: "CONFLICTING", ReviewDecision: "REVIEW_REQUIRED",
				Diff: "diff --git a/main.go b/main.go\n", CreatedAt: at(7), UpdatedAt: at(8)},
			{Number: 5, Title: "Fix typo", Body: "From a fork.", State: "OPEN", Author: ForkOwner,
				HeadRefName: "main", HeadOwner: ForkOwner, BaseRefName: "main", Mergeable: "MERGEABLE",
				Diff: "diff --git a/README.md b/README.md\n", CreatedAt: at(9), UpdatedAt: at(10)},
		}},
		Runs: map[string][]Run{key: {
			{DatabaseID: 100, DisplayTitle: "Add greeting", Name: "CI", WorkflowName: "CI", Status: "completed",
				Conclusion: "failure", HeadBranch: "greeting", Event: "pull_request", CreatedAt: at(5),
				Jobs: []Job{{ID: 1000, Name: "build", Status: "completed", Conclusion: "success"},
					{ID: 1001, Name: "lint", Status: "completed", Conclusion: "failure",
						Steps: []Step{{"Set up job", "success"}, {"Run make lint", "failure"}}, Log: defaultLintLog}}},
			{DatabaseID: 101, DisplayTitle: "Release", Name: "Release", WorkflowName: "Release", Status: "in_progress",
				HeadBranch: "main", Event: "push", CreatedAt: at(11),
				Jobs: []Job{{ID: 1002, Name: "publish", Status: "in_progress"}}},
		}},
	}
}

const defaultDiff = `diff --git a/.env b/.env
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/.env
@@ -0,0 +1 @@
+API_KEY=not-a-real-secret
diff --git a/README.md b/README.md
index 557db03..980a0d5 100644
--- a/README.md
+++ b/README.md
@@ -1 +1,2 @@
 Hello
+Greetings, user.
`

// defaultLintLog is job 1001's log: a failed lint step, with a colour
// escape and a token value as CI logs carry them.
const defaultLintLog = "2026-11-01T14:00:00.0000000Z ##[group]Run make lint\n" +
	"2026-11-01T14:00:01.0000000Z \x1b[31mmain.go:3: exported func Hello has no comment\x1b[0m\n" +
	"2026-11-01T14:00:01.1000000Z GITHUB_TOKEN=ghs_0123456789abcdefghijABCDEFGHIJ\n" +
	"2026-11-01T14:00:02.0000000Z ##[error]Process completed with exit code 1.\n"
