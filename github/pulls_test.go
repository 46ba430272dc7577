package github

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// A query that names where to search is refused before gh starts, however
// it is spelled: any case (also by Unicode folding), quoted, negated,
// grouped, after NOT or inside a phrase; other qualifiers stay allowed.
// With the refusal switched off the same query reaches gh (the attack), and
// the address check alone still drops the other repository's results.
func TestSearchStaysInTheProjectsRepository(t *testing.T) {
	gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	g := newRecordingGH(t, dir, "")
	r := openGH(t, dir, g)
	for _, q := range []string{
		"repo:victim/private", "REPO:victim/private", "Repo:victim/private", "crash org:victim", "user:victim", "owner:victim",
		`"repo:victim/private"`, `-repo:octo/hello`, `NOT repo:octo/hello`, `(is:open OR repo:victim/x)`, `"fix it repo:victim/x"`,
		"uſer:victim", "ORG:victim", "is:open\trepo:victim/x", `crash (org:"victim")`, "is:open,repo:victim/x",
	} {
		_, err := Search(ctx, r, closed, q, 0)
		if !errors.Is(err, ErrForeignQualifier) || refusal.Sentence(err) != "Search this project only: leave out repo:, org:, user: and owner: filters." {
			t.Errorf("query %q: %v", q, err)
		}
	}
	if n := len(g.calls(t)); n != 0 {
		t.Fatalf("gh ran %d times for refused queries", n)
	}
	for _, q := range []string{"is:open crash", "author:alice label:bug", "reporting: crash", "in:title repository"} {
		if _, err := Search(ctx, r, closed, q, 0); err != nil {
			t.Errorf("query %q refused: %v", q, err)
		}
	}

	searchQualifiersAllowedForTest = true
	t.Cleanup(func() { searchQualifiersAllowedForTest = false })
	found, err := Search(ctx, r, closed, "repo:victim/private", 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := g.calls(t)
	if last := calls[len(calls)-1].args; last[len(last)-1] != "repo:victim/private" {
		t.Fatalf("without the refusal the query does not reach gh, so this proves nothing: %q", last)
	}
	if len(found.Items) != 1 || !strings.Contains(string(found.Items[0]), "octo/hello/issues/1") || found.Dropped != 2 {
		t.Fatalf("the address check alone kept another repository's items (or did not count them): %s, %d dropped", found.Items, found.Dropped)
	}
}

// pull.merge takes the method asked for when the repository allows it
// (the stand-in's repository allows squash and rebase, not merge commits),
// refuses one it does not allow with a sentence before gh merges, and sends
// a squash's subject as --subject= and its body on stdin; with no method
// it takes the first allowed, as before.
func TestPullMergeMethod(t *testing.T) {
	gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	g := newRecordingGH(t, dir, "")
	r := openGH(t, dir, g)
	_, err := PullMerge(ctx, r, closed, 3, PullMergeOptions{Method: "merge"})
	wantRefusal(t, err, ErrMergeMethod)
	if s := refusal.Sentence(err); s != "This repository does not allow merge commits on GitHub." {
		t.Fatalf("sentence %q", s)
	}
	for _, c := range g.calls(t) {
		if slices.Contains(c.args, "merge") && c.args[0] == "pr" {
			t.Fatalf("gh merged with a method the repository does not allow: %q", c.args)
		}
	}
	if _, err := PullMerge(ctx, r, closed, 3, PullMergeOptions{Method: "squash", Subject: "--admin Add f (#3)", Body: "why\n"}); err != nil {
		t.Fatal(err)
	}
	calls := g.calls(t)
	last := calls[len(calls)-1]
	if want := []string{"pr", "merge", "3", "--repo", "github.com/octo/hello", "--squash", "--subject=--admin Add f (#3)", "--body-file", "-"}; !slices.Equal(last.args, want) || last.stdin != "why\n" {
		t.Fatalf("squash %q stdin %q", last.args, last.stdin)
	}
	if _, err := PullMerge(ctx, r, closed, 3, PullMergeOptions{Method: "rebase"}); err != nil {
		t.Fatal(err)
	}
	calls = g.calls(t)
	if last := calls[len(calls)-1].args; !slices.Contains(last, "--rebase") || slices.Contains(last, "--subject") {
		t.Fatalf("rebase %q", last)
	}
	for _, o := range []PullMergeOptions{{Method: "fast-forward"}, {Method: "--admin"}, {Method: "rebase", Subject: "x"}, {Method: "squash", Subject: "a\nb"}} {
		if _, err := PullMerge(ctx, r, closed, 3, o); refusal.KindOf(err) != refusal.BadParams {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// One merge per pull request at a time: while one holds the claim a second
// is refused with the seed's sentence; another pull request, or the same
// one after the first ends, may merge.
func TestOneMergePerPullRequest(t *testing.T) {
	pin := Repo{Host: "github.com", Owner: "octo", Name: "hello"}
	release, err := claimMerge(pin, 3)
	if err != nil {
		t.Fatal(err)
	}
	_, err = claimMerge(Repo{Host: "github.com", Owner: "Octo", Name: "Hello"}, 3)
	wantRefusal(t, err, ErrAlreadyMerging)
	if refusal.Sentence(err) != "This pull request is already being merged." {
		t.Fatalf("sentence %q", refusal.Sentence(err))
	}
	other, err := claimMerge(pin, 4)
	if err != nil {
		t.Fatal(err)
	}
	other()
	release()
	again, err := claimMerge(pin, 3)
	if err != nil {
		t.Fatal(err)
	}
	again()
}

// A pull request's files, paged, and one file's diff: the secret file
// (.env) is left out below full by the gate's rule, counted, and as absent
// from pull.file as a file the pull request does not change; full sees it,
// which is what the rule takes away.
func TestPullFilesHideSecretsBelowFull(t *testing.T) {
	gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	r := openGH(t, dir, newRecordingGH(t, dir, ""))
	full, err := PullFiles(ctx, r, closed, trust.Full, 3, 0)
	if err != nil || full.Total != 2 || full.Files[1].Path != ".env" {
		t.Fatalf("full: %+v %v", full, err)
	}
	if d, err := PullFile(ctx, r, closed, trust.Full, 3, ".env"); err != nil || !strings.Contains(d.Diff, "secret-marker") {
		t.Fatalf("full does not see the secret file's diff, so this proves nothing: %+v %v", d, err)
	}
	view, err := PullFiles(ctx, r, closed, trust.View, 3, 0)
	if err != nil || view.Total != 1 || view.HiddenSecrets != 1 || view.Files[0].Path != "README.md" || view.Files[0].Added != 1 || view.Files[0].Deleted != 1 || view.Files[0].Status != "modified" {
		t.Fatalf("view: %+v %v", view, err)
	}
	_, err = PullFile(ctx, r, closed, trust.View, 3, ".env")
	wantRefusal(t, err, ErrNoSuchFile)
	if d, err := PullFile(ctx, r, closed, trust.View, 3, "README.md"); err != nil || !strings.Contains(d.Diff, "+b") {
		t.Fatalf("README.md: %+v %v", d, err)
	}
	if _, err := PullFiles(ctx, r, closed, trust.View, 3, -1); refusal.KindOf(err) != refusal.BadParams {
		t.Fatalf("a negative offset: %v", err)
	}
}

// The base branches come default first, each once, a name git would not
// take as a branch left out; the methods are the repository's.
func TestPullOptions(t *testing.T) {
	gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	o, err := Options(ctx, openGH(t, dir, newRecordingGH(t, dir, "")), closed)
	if err != nil || !slices.Equal(o.Branches, []string{"trunk", "feature"}) || !slices.Equal(o.Methods, []string{"squash", "rebase"}) || o.DefaultBranch != "trunk" {
		t.Fatalf("%+v %v", o, err)
	}
}

// A failed job's log: only failed jobs, their failed step named, escape
// codes taken out, a secret's value masked.
func TestRunLog(t *testing.T) {
	gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	l, err := RunLog(ctx, openGH(t, dir, newRecordingGH(t, dir, "")), closed, 100)
	if err != nil || len(l.Jobs) != 1 {
		t.Fatalf("%+v %v", l, err)
	}
	j := l.Jobs[0]
	if j.Name != "lint" || j.Step != "make lint" || !slices.Equal(j.Lines, []string{"failed", "TOKEN=***"}) || j.Masked != 1 {
		t.Fatalf("%+v", j)
	}
}

// Log lines are bounded (the last lines kept), drawn as text (no escape
// or control character survives) and masked where they look like a
// secret's value.
func TestCleanLog(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	b.WriteString("last\n")
	lines, truncated, _ := cleanLog([]byte(b.String()))
	if len(lines) != maxLogLines || !truncated || lines[len(lines)-1] != "last" {
		t.Fatalf("%d lines, truncated %v, last %q", len(lines), truncated, lines[len(lines)-1])
	}
	long, truncated, _ := cleanLog([]byte(strings.Repeat(strings.Repeat("y", 5000)+"\n", 100)))
	size := 0
	for _, l := range long {
		size += len(l) + 1
	}
	if size > maxLogBytes || !truncated || len(long[0]) > maxLogLine+len("…") {
		t.Fatalf("%d bytes in %d lines", size, len(long))
	}
	for in, want := range map[string]string{
		"\x1b[31mred\x1b[0m":                          "red",
		"\x1b]0;title\x07x":                           "x",
		"\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\": "link",
		"over\rwrite":                                 "overwrite",
		"a\u202eb":                                    "ab",
		"\u009b2Jclear":                               "clear",
		"token ghp_0123456789abcdefghijABCDEFGHIJ0123 used": "token *** used",
		"AWS AKIAIOSFODNN7EXAMPLE":                          "AWS ***",
		"export API_KEY=\"abc def\"":                        "export API_KEY=***",
		"Authorization: Bearer abcdefghijkl":                "Authorization: Bearer ***",
		"git clone https://user:pa55@example.com/x":         "git clone https://user:***@example.com/x",
		"-----BEGIN RSA PRIVATE KEY-----":                   "***",
		"author: alice":                                     "author: alice",
		"TOKEN=***":                                         "TOKEN=***",
	} {
		got, _, _ := cleanLog([]byte(in))
		if len(got) != 1 || got[0] != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
