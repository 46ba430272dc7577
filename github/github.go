package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/redact"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

var (
	ErrBadParams = refusal.New(refusal.BadParams, "bad github parameters",
		"Name an issue, pull request or run by its number, and a list by open, closed, merged or all.")
	ErrText = refusal.New(refusal.BadParams, "bad github text",
		"That text is empty or too long for GitHub.")
	ErrNoMergeMethod = refusal.New(refusal.Refused, "no merge method allowed",
		"This repository allows no way to merge on GitHub (merge commit, squash or rebase).")
)

// GitHub list kinds and the fields gatehouse asks gh for. Lists keep to
// what a row shows; an item's view has its whole text.
var lists = map[string]struct{ cmd, fields string }{
	"issues": {"issue", "number,title,state,author,updatedAt,labels"},
	"pulls":  {"pr", "number,title,state,author,headRefName,baseRefName,isDraft,updatedAt,reviewDecision"},
	"runs":   {"run", "databaseId,displayTitle,status,conclusion,workflowName,headBranch,event,createdAt"},
}

var items = map[string]struct{ cmd, fields string }{
	"issue": {"issue", "number,title,body,state,author,labels,comments,createdAt,updatedAt,url"},
	"pull":  {"pr", "number,title,body,state,author,headRefName,baseRefName,isDraft,mergeable,reviewDecision,statusCheckRollup,reviews,comments,url"},
	"run":   {"run", "databaseId,displayTitle,status,conclusion,workflowName,headBranch,event,createdAt,jobs,url"},
}

const (
	// Page is a page of a GitHub list; a device pages with offset.
	Page = 30
	// maxList bounds how far into a list a device may page (gh fetches
	// from the start each time).
	maxList = 1000
	// MaxBody bounds a comment's or review's text, and a pull request's.
	MaxBody = 65536
	// maxTitle bounds a pull request's title and a search query.
	maxTitle = 256
	// slowTimeout bounds a gh call that waits on GitHub longer than a
	// list does (a merge, a pull request's creation); the launcher's own
	// bound is a minute.
	slowTimeout = 120 * time.Second
)

// List is a page of a GitHub list, each item as gh gives it.
type List struct {
	Items []json.RawMessage `json:"items"`
	Next  int               `json:"next,omitempty"`
	Repo  string            `json:"repo"`
	// Dropped counts a search's results left out because their address
	// is not the pinned repository's, so the device is told, not left to
	// wonder why the list is short.
	Dropped int `json:"dropped,omitempty"`
}

// page cuts a page from a JSON array gh printed for limit items.
func page(out []byte, offset, limit int) (List, error) {
	var all []json.RawMessage
	if err := json.Unmarshal(out, &all); err != nil {
		return List{}, fmt.Errorf("%w: %v", gate.ErrGHOutput, err)
	}
	l := List{Items: []json.RawMessage{}}
	if offset < len(all) {
		l.Items = all[offset:]
	}
	if len(all) == limit && limit < maxList {
		l.Next = limit
	}
	return l, nil
}

func pageLimit(offset int) (int, error) {
	if offset < 0 || offset >= maxList {
		return 0, ErrBadParams
	}
	return min(offset+Page, maxList), nil
}

// ListOf lists the project's issues, pull requests or CI runs (kind),
// open, closed, merged or all (state; runs have none), a page from offset.
func ListOf(ctx context.Context, r *gate.Repo, t trust.Trust, kind, state string, offset int) (*List, error) {
	l, ok := lists[kind]
	if !ok {
		return nil, ErrBadParams
	}
	limit, err := pageLimit(offset)
	if err != nil {
		return nil, err
	}
	gh, pin, _, err := start(ctx, r, t, false, "see it on GitHub")
	if err != nil {
		return nil, err
	}
	args := []string{l.cmd, "list", "--repo", pin.String(), "--json", l.fields, "--limit", strconv.Itoa(limit)}
	switch {
	case kind == "runs" && state == "":
	case kind != "runs" && state == "":
		args = append(args, "--state", "open")
	case kind != "runs" && (state == "open" || state == "closed" || state == "all" || state == "merged" && kind == "pulls"):
		args = append(args, "--state", state)
	default:
		return nil, ErrBadParams
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: args})
	if err != nil {
		return nil, err
	}
	p, err := page(out, offset, limit)
	p.Repo = pin.FullName()
	return &p, err
}

// Item shows one issue, pull request (with its checks and reviews) or run
// (with its jobs).
func Item(ctx context.Context, r *gate.Repo, t trust.Trust, kind string, number int64) (json.RawMessage, error) {
	it, ok := items[kind]
	if !ok || number <= 0 {
		return nil, ErrBadParams
	}
	gh, pin, _, err := start(ctx, r, t, false, "see it on GitHub")
	if err != nil {
		return nil, err
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{it.cmd, "view", strconv.FormatInt(number, 10), "--repo", pin.String(), "--json", it.fields}})
	if err != nil {
		return nil, err
	}
	if !json.Valid(out) {
		return nil, gate.ErrGHOutput
	}
	return json.RawMessage(out), nil
}

// checkText checks a device's text for GitHub: valid UTF-8, no NUL, within
// max bytes, and not empty unless allowed.
func checkText(s string, max int, empty bool) error {
	if len(s) > max || !utf8.ValidString(s) || strings.ContainsRune(s, 0) || !empty && strings.TrimSpace(s) == "" {
		return ErrText
	}
	return nil
}

// Search finds the project's issues and pull requests matching query, in
// GitHub's search syntax. The query goes after "--", so it is never read
// as an option. GitHub reads qualifiers in it (is:open, author:x are
// useful), and several repo: qualifiers mean any of them, so a query
// naming another repository would reach it beside --repo's: what comes
// back is kept only when its address is the pinned repository's, whatever
// the query said. A query naming a repository, organisation, user or owner
// is refused first with the seed's sentence (foreignQualifier); the address
// check stays as the second wall, for what that reading misses.
func Search(ctx context.Context, r *gate.Repo, t trust.Trust, query string, offset int) (*List, error) {
	if err := checkText(query, maxTitle, false); err != nil {
		return nil, err
	}
	if foreignQualifier(query) && !searchQualifiersAllowedForTest {
		return nil, ErrForeignQualifier
	}
	limit, err := pageLimit(offset)
	if err != nil {
		return nil, err
	}
	gh, pin, _, err := start(ctx, r, t, false, "search it on GitHub")
	if err != nil {
		return nil, err
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"search", "issues", "--repo", pin.FullName(), "--include-prs",
		"--json", "number,title,state,author,isPullRequest,updatedAt,url", "--limit", strconv.Itoa(limit), "--", query}, Host: pin.Host})
	if err != nil {
		return nil, err
	}
	p, err := page(out, offset, limit)
	if err != nil {
		return nil, err
	}
	kept := p.Items[:0]
	for _, it := range p.Items {
		var v struct{ URL string }
		if json.Unmarshal(it, &v) == nil && ofRepo(v.URL, pin) {
			kept = append(kept, it)
		} else {
			p.Dropped++
		}
	}
	p.Items, p.Repo = kept, pin.FullName()
	return &p, nil
}

// Done is what a change on GitHub gave back: the address gh printed.
type Done struct {
	URL string `json:"url,omitempty"`
	// Number is a new pull request's, read from URL (pull.create).
	Number int64 `json:"number,omitempty"`
}

func done(out []byte) *Done {
	line := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if !strings.HasPrefix(line, "https://") || len(line) > 2048 {
		line = ""
	}
	line, _ = redact.Line(line) // a password or token in the address gh printed
	return &Done{URL: line}
}

// Comment comments on an issue or pull request; the text goes on stdin.
func Comment(ctx context.Context, r *gate.Repo, t trust.Trust, number int64, body string) (*Done, error) {
	if number <= 0 {
		return nil, ErrBadParams
	}
	if err := checkText(body, MaxBody, false); err != nil {
		return nil, err
	}
	gh, pin, _, err := start(ctx, r, t, false, "comment on GitHub")
	if err != nil {
		return nil, err
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"issue", "comment", strconv.FormatInt(number, 10), "--repo", pin.String(), "--body-file", "-"}, Stdin: body})
	if err != nil {
		return nil, err
	}
	return done(out), nil
}
