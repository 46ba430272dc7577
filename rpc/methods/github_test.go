package methods_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/fakegithub"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// needGH skips without Debian's gh, unless make test asked for it.
func needGH(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gh"); err == nil {
		return
	}
	if os.Getenv("GATEHOUSE_GH_TESTS") == "1" {
		t.Fatal("the GitHub tests need gh (Debian's gh package)")
	}
	t.Skip("needs gh; make test installs it")
}

// ghThroughFake points gatehouse's gh at a local fake of GitHub (as an
// Enterprise host) and serves a checkout whose origin is octo/hello there.
func ghThroughFake(t *testing.T, g trust.Grant) (*host, string, *fakegithub.Server) {
	t.Helper()
	needGH(t)
	gittest.Home(t, "")
	fake := fakegithub.Start(t)
	for _, kv := range fake.Env(t.TempDir()) {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GH_") || k == "SSL_CERT_FILE" || k == "NO_COLOR" {
			t.Setenv(k, v)
		}
	}
	dir := gittest.Init(t, map[string]string{"README.md": "Hello\n"})
	gittest.Git(t, dir, "remote", "add", "origin", "https://"+fake.Host+"/octo/hello.git")
	h := newHost(t, g, dir)
	return h, h.ids[dir], fake
}

// The GitHub methods through the real gh against the fake: the project's
// lists, an item with its checks, search, a pull request's diff with the
// secret file's section dropped below full, and the changes (comment,
// review, merge), each checked in the fake's state, every call pinned to
// octo/hello.
func TestGitHubMethodsThroughRealGH(t *testing.T) {
	h, id, fake := ghThroughFake(t, trust.Full)
	var list struct {
		Repo  string
		Items []struct {
			Number  int
			Title   string
			IsDraft bool
		}
	}
	h.ok(t, "github.pulls", map[string]any{"target": id}, &list)
	if list.Repo != "octo/hello" || len(list.Items) != 3 {
		t.Fatalf("pulls: %+v", list)
	}
	h.ok(t, "github.issues", map[string]any{"target": id, "state": "all"}, &list)
	if len(list.Items) != 2 {
		t.Fatalf("issues: %+v", list)
	}
	h.ok(t, "github.runs", map[string]any{"target": id}, &list)
	if len(list.Items) != 2 {
		t.Fatalf("runs: %+v", list)
	}
	var pr struct {
		Title             string
		StatusCheckRollup []struct{ Name, Conclusion string }
		Reviews           []struct{ State string }
	}
	h.ok(t, "github.item", map[string]any{"target": id, "kind": "pull", "number": 3}, &pr)
	if pr.Title != "Add greeting" || len(pr.StatusCheckRollup) != 2 || len(pr.Reviews) != 1 {
		t.Fatalf("pull 3: %+v", pr)
	}
	h.ok(t, "github.search", map[string]any{"target": id, "query": "crash"}, &list)
	if len(list.Items) != 1 || list.Items[0].Number != 1 {
		t.Fatalf("search: %+v", list)
	}
	var df struct {
		Diff          string
		HiddenSecrets int
	}
	h.ok(t, "pull.diff", map[string]any{"target": id, "number": 3}, &df)
	if !strings.Contains(df.Diff, "API_KEY") || !strings.Contains(df.Diff, "Greetings") {
		t.Fatalf("full diff: %+v", df)
	}
	h.ok(t, "github.comment", map[string]any{"target": id, "number": 1, "body": "--body from the phone\n"}, nil)
	h.ok(t, "pull.review", map[string]any{"target": id, "number": 3, "event": "approve"}, nil)
	h.ok(t, "pull.merge", map[string]any{"target": id, "number": 3}, nil)
	fake.Mu.Lock()
	issue := fake.Data.Issues["octo/hello"][0]
	pull := fake.Data.Pulls["octo/hello"][0]
	fake.Mu.Unlock()
	if last := issue.Comments[len(issue.Comments)-1]; !strings.Contains(last.Body, "--body from the phone") {
		t.Fatalf("comment: %+v", issue.Comments)
	}
	if pull.MergedWith != "merge" || len(pull.Reviews) != 2 {
		t.Fatalf("pull after review and merge: merged with %q, %d reviews", pull.MergedWith, len(pull.Reviews))
	}
	var repos struct {
		Items []struct{ NameWithOwner string }
	}
	h.ok(t, "github.repos", map[string]any{}, &repos)
	if len(repos.Items) == 0 || repos.Items[0].NameWithOwner != "octo/hello" {
		t.Fatalf("repos: %+v", repos)
	}
	for _, r := range fake.Requests() {
		if v, ok := r.Variables["owner"]; ok && v != "octo" {
			t.Fatalf("a call for another owner: %+v", r)
		}
	}
}

// Below full, a pull request's diff leaves the secret file out, as git.diff
// does; a project whose remote is not on GitHub is refused with a sentence.
func TestGitHubDiffHidesSecretsBelowFull(t *testing.T) {
	h, id, _ := ghThroughFake(t, trust.View)
	var df struct {
		Diff          string
		HiddenSecrets int
	}
	h.ok(t, "pull.diff", map[string]any{"target": id, "number": 3}, &df)
	if strings.Contains(df.Diff, "API_KEY") || !strings.Contains(df.Diff, "Greetings") || df.HiddenSecrets != 1 {
		t.Fatalf("view diff: %+v", df)
	}
	plain := gittest.Init(t, map[string]string{"a": "a\n"})
	gittest.Git(t, plain, "remote", "add", "origin", filepath.Join(t.TempDir(), "elsewhere.git"))
	h2 := newHost(t, trust.View, plain)
	h2.refused(t, "github.issues", map[string]any{"target": h2.ids[plain]}, "REFUSED", "This project has no GitHub remote")
}

// A search that names another repository (GitHub reads repo: in the query
// and several repo: qualifiers mean any of them): the real gh returns that
// repository's items, the attack as it stands; github.search refuses the
// query with the seed's sentence before gh starts (the address check that
// stands behind it is shown alone in package github's tests).
func TestGitHubSearchStaysInItsRepository(t *testing.T) {
	h, id, fake := ghThroughFake(t, trust.View)
	fake.Mu.Lock()
	fake.Data.Repos = append(fake.Data.Repos, fakegithub.Repo{Owner: "victim", Name: "private", Private: true, DefaultBranch: "main"})
	fake.Data.Issues["victim/private"] = []fakegithub.Issue{{Number: 7, Title: "The secret plan", Body: "plan", State: "OPEN", Author: "victim"}}
	fake.Mu.Unlock()

	for _, q := range []string{"repo:victim/private", `-REPO:"victim/private"`, "(is:open OR Org:victim)"} {
		cmd := exec.Command("gh", "search", "issues", "--repo", "octo/hello", "--include-prs", "--json", "url", "--", q)
		cmd.Dir = t.TempDir()
		raw, err := cmd.CombinedOutput()
		if q == "repo:victim/private" && (err != nil || !strings.Contains(string(raw), "victim/private/issues/7")) {
			t.Fatalf("plain gh does not reach the other repository, so this test proves nothing: %v %s", err, raw)
		}
		before := len(fake.Requests())
		h.refused(t, "github.search", map[string]any{"target": id, "query": q}, "BAD_PARAMS",
			"Search this project only: leave out repo:, org:, user: and owner: filters.")
		if len(fake.Requests()) != before {
			t.Fatalf("gh reached GitHub for the refused query %q", q)
		}
	}
}
