package methods_test

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/internal/fakegithub"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// A pull request end to end through the real gh against the fake: the
// base branches and merge methods offered, a branch pushed and opened as a
// pull request into a base chosen from them (a draft too), a merge method
// the repository does not allow refused with a sentence, then a squash
// merge, each checked in the fake's state.
func TestPullRequestEndToEndThroughRealGH(t *testing.T) {
	h, id, fake := ghThroughFake(t, trust.Full)
	dir := dirOf(h, id)
	remote := t.TempDir()
	gittest.Git(t, remote, "init", "-q", "--bare")
	gittest.Git(t, dir, "config", "url."+remote+".pushInsteadOf", "https://"+fake.Host+"/octo/hello.git")
	h.switchOn.Store(true) // the push goes to a local folder, which the closed gate's protocols refuse
	var opts struct {
		Repo, DefaultBranch string
		Branches, Methods   []string
	}
	h.ok(t, "pull.options", map[string]any{"target": id}, &opts)
	if opts.Repo != "octo/hello" || strings.Join(opts.Branches, ",") != "main,greeting,refactor" || strings.Join(opts.Methods, ",") != "merge,squash" {
		t.Fatalf("options: %+v", opts)
	}
	gittest.Git(t, dir, "switch", "-q", "-c", "feature")
	gittest.Write(t, dir, map[string]string{"f.txt": "f\n"})
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Git(t, dir, "commit", "-qm", "Add f")
	var created struct {
		URL    string
		Number int
	}
	h.ok(t, "pull.create", map[string]any{"target": id, "title": "Add f", "body": "Because.\n", "base": "greeting"}, &created)
	if !strings.Contains(gittest.Git(t, remote, "branch"), "feature") || created.Number == 0 || !strings.HasSuffix(created.URL, fmt.Sprintf("/octo/hello/pull/%d", created.Number)) {
		t.Fatalf("created %+v", created)
	}
	pull := pullOf(fake, created.Number)
	if pull.Title != "Add f" || pull.Body != "Because.\n" || pull.BaseRefName != "greeting" || pull.HeadRefName != "feature" || pull.IsDraft {
		t.Fatalf("the fake's pull request: %+v", pull)
	}
	gittest.Git(t, dir, "switch", "-q", "-c", "drafty")
	var draft struct{ Number int }
	h.ok(t, "pull.create", map[string]any{"target": id, "title": "Not yet", "draft": true}, &draft)
	if p := pullOf(fake, draft.Number); !p.IsDraft || p.BaseRefName != "main" {
		t.Fatalf("draft: %+v", p)
	}
	h.refused(t, "pull.merge", map[string]any{"target": id, "number": created.Number, "method": "rebase"}, "REFUSED",
		"This repository does not allow rebase merges on GitHub.")
	if pullOf(fake, created.Number).State != "OPEN" {
		t.Fatal("a refused method merged")
	}
	h.ok(t, "pull.merge", map[string]any{"target": id, "number": created.Number, "method": "squash", "subject": "Add f (#7)", "body": "Squashed on the phone.\n"}, nil)
	if p := pullOf(fake, created.Number); p.State != "MERGED" || p.MergedWith != "squash" || p.MergeSubject != "Add f (#7)" || p.MergeBody != "Squashed on the phone.\n" {
		t.Fatalf("after the squash: %+v", p)
	}
}

func pullOf(fake *fakegithub.Server, n int) fakegithub.Pull {
	fake.Mu.Lock()
	defer fake.Mu.Unlock()
	for _, p := range fake.Data.Pulls["octo/hello"] {
		if p.Number == n {
			return p
		}
	}
	return fakegithub.Pull{}
}

// One merge per pull request at a time. Two plain gh merges of the same
// pull request while GitHub holds the first both reach GitHub (what the
// rule prevents); through gatehouse the second is refused with the seed's
// sentence while the first waits, the first then merges, and a later retry
// finds the pull request merged (gh says so and merges nothing).
func TestOneMergePerPullRequestThroughRealGH(t *testing.T) {
	h, id, fake := ghThroughFake(t, trust.Full)
	merges := func(reqs []fakegithub.Request) int {
		n := 0
		for _, r := range reqs {
			if strings.Contains(fmt.Sprint(r.Variables["input"]), "mergeMethod") {
				n++
			}
		}
		return n
	}
	count := func() int { return merges(fake.Requests()) }

	reached, release := fake.HoldMerges()
	dir := t.TempDir()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("gh", "pr", "merge", "3", "--repo", fake.RepoFlag("octo/hello"), "--merge")
			cmd.Dir = dir
			_ = cmd.Run() // one of the two finds it merged once let go
		}()
	}
	<-reached
	fake.WaitFor(func(reqs []fakegithub.Request) bool { return merges(reqs) >= 2 })
	if count() != 2 {
		t.Fatalf("plain gh: %d merges reached GitHub at once, so this test proves nothing", count())
	}
	release()
	wg.Wait()

	reached, release = fake.HoldMerges()
	first := make(chan rpc.Response, 1)
	go func() {
		first <- h.call(t, "pull.merge", map[string]any{"target": id, "number": 5, "method": "squash"})
	}()
	<-reached
	before := count()
	h.refused(t, "pull.merge", map[string]any{"target": id, "number": 5, "method": "squash"}, "BUSY", "This pull request is already being merged.")
	if count() != before {
		t.Fatal("the second merge reached GitHub")
	}
	release()
	if r := <-first; !r.OK {
		t.Fatalf("the first merge: %s %s", r.Code, r.Error)
	}
	if p := pullOf(fake, 5); p.State != "MERGED" || p.MergedWith != "squash" {
		t.Fatalf("after the merge: %+v", p)
	}
	before = count()
	h.ok(t, "pull.merge", map[string]any{"target": id, "number": 5, "method": "squash"}, nil)
	if count() != before {
		t.Fatal("a later retry merged again")
	}
}

// A 400-file pull request's files, paged 50 at a time, each file's diff
// one at a time; below full the secret file is neither listed nor readable.
// A failed run's log: the failed job's last lines, colours taken out and
// the token masked.
func TestPullFilesAndRunLogThroughRealGH(t *testing.T) {
	for _, g := range []trust.Grant{trust.Full, trust.View} {
		h, id, fake := ghThroughFake(t, g)
		var diff strings.Builder
		for i := range 400 {
			fmt.Fprintf(&diff, "diff --git a/src/f%03d.go b/src/f%03d.go\nindex 1..2 100644\n--- a/src/f%03d.go\n+++ b/src/f%03d.go\n@@ -1 +1,2 @@\n-old\n+new %d\n+more\n", i, i, i, i, i)
		}
		diff.WriteString("diff --git a/.env b/.env\nnew file mode 100644\n--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+API_KEY=marker-value\n")
		fake.Mu.Lock()
		fake.Data.Pulls["octo/hello"][0].Diff = diff.String()
		fake.Mu.Unlock()
		var seen []string
		hidden := 0
		for offset := 0; ; {
			var page struct {
				Files []struct {
					Path, Status   string
					Added, Deleted int
				}
				Total, Next, HiddenSecrets int
			}
			h.ok(t, "pull.files", map[string]any{"target": id, "number": 3, "offset": offset}, &page)
			if len(page.Files) > 50 {
				t.Fatalf("a page of %d files", len(page.Files))
			}
			for _, f := range page.Files {
				seen = append(seen, f.Path)
				if f.Path != ".env" && (f.Added != 2 || f.Deleted != 1 || f.Status != "modified") {
					t.Fatalf("%+v", f)
				}
			}
			hidden = page.HiddenSecrets
			if page.Next == 0 {
				break
			}
			offset = page.Next
		}
		var one struct{ Diff string }
		h.ok(t, "pull.file", map[string]any{"target": id, "number": 3, "path": "src/f399.go"}, &one)
		if !strings.Contains(one.Diff, "+new 399") || strings.Contains(one.Diff, "f398") {
			t.Fatalf("one file's diff: %q", one.Diff)
		}
		switch g {
		case trust.Full:
			if len(seen) != 401 || seen[400] != ".env" {
				t.Fatalf("full saw %d files", len(seen))
			}
			h.ok(t, "pull.file", map[string]any{"target": id, "number": 3, "path": ".env"}, &one)
			if !strings.Contains(one.Diff, "marker-value") {
				t.Fatal("full does not see the secret file, so the view check proves nothing")
			}
		default:
			if len(seen) != 400 || hidden != 1 {
				t.Fatalf("view saw %d files, %d hidden", len(seen), hidden)
			}
			h.refused(t, "pull.file", map[string]any{"target": id, "number": 3, "path": ".env"}, "BAD_PARAMS", "This pull request changes no such file")
		}

		var log struct {
			Jobs []struct {
				Name, Step string
				Lines      []string
				Masked     int
			}
		}
		h.ok(t, "github.runLog", map[string]any{"target": id, "id": 100}, &log)
		if len(log.Jobs) != 1 || log.Jobs[0].Name != "lint" || log.Jobs[0].Step != "Run make lint" || log.Jobs[0].Masked != 1 {
			t.Fatalf("run log: %+v", log)
		}
		text := strings.Join(log.Jobs[0].Lines, "\n")
		if strings.Contains(text, "\x1b") || strings.Contains(text, "ghs_0123") || !strings.Contains(text, "exported func Hello has no comment") || !strings.Contains(text, "GITHUB_TOKEN=***") {
			t.Fatalf("run log lines: %q", text)
		}
	}
}

func dirOf(h *host, id string) string {
	for d, i := range h.ids {
		if i == id {
			return d
		}
	}
	return ""
}
