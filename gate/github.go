package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// The GitHub operations a device may ask for, each one gh command of a
// fixed shape: gatehouse picks the subcommand, the --json fields and the
// repository; a device gives only a number, a state word, a branch name
// (validated as git's), and text that goes on stdin or after "--".

var (
	ErrGHBadParams = refusal.New(refusal.BadParams, "bad github parameters",
		"Name an issue, pull request or run by its number, and a list by open, closed, merged or all.")
	ErrGHText = refusal.New(refusal.BadParams, "bad github text",
		"That text is empty or too long for GitHub.")
	ErrGHNoMergeMethod = refusal.New(refusal.Refused, "no merge method allowed",
		"This repository allows no way to merge on GitHub (merge commit, squash or rebase).")
)

// GitHub list kinds and the fields gatehouse asks gh for. Lists keep to
// what a row shows; an item's view has its whole text.
var ghLists = map[string]struct{ cmd, fields string }{
	"issues": {"issue", "number,title,state,author,updatedAt,labels"},
	"pulls":  {"pr", "number,title,state,author,headRefName,baseRefName,isDraft,updatedAt,reviewDecision"},
	"runs":   {"run", "databaseId,displayTitle,status,conclusion,workflowName,headBranch,event,createdAt"},
}

var ghItems = map[string]struct{ cmd, fields string }{
	"issue": {"issue", "number,title,body,state,author,labels,comments,createdAt,updatedAt,url"},
	"pull":  {"pr", "number,title,body,state,author,headRefName,baseRefName,isDraft,mergeable,reviewDecision,statusCheckRollup,reviews,comments,url"},
	"run":   {"run", "databaseId,displayTitle,status,conclusion,workflowName,headBranch,event,createdAt,jobs,url"},
}

const (
	// GHPage is a page of a GitHub list; a device pages with offset.
	GHPage = 30
	// maxGHList bounds how far into a list a device may page (gh fetches
	// from the start each time).
	maxGHList = 1000
	// MaxGHBody bounds a comment's or review's text, and a pull request's.
	MaxGHBody = 65536
	// maxGHTitle bounds a pull request's title and a search query.
	maxGHTitle = 256
)

// GHList is a page of a GitHub list, each item as gh gives it.
type GHList struct {
	Items []json.RawMessage `json:"items"`
	Next  int               `json:"next,omitempty"`
	Repo  string            `json:"repo"`
}

// ghStart is every GitHub call's first step: the gate's decision at lvl
// (a checkout whose config would make gh's git run a program is refused for
// a closed caller, as for git), then the repository the call names, as gh
// resolves it (githubRemotes), and the push remote's.
func (r *Repo) ghStart(ctx context.Context, t trust.Trust, lvl level, action string) (*decision, GHRepo, GHRepo, error) {
	d, err := r.decide(ctx, t, lvl, action)
	if err != nil {
		return nil, GHRepo{}, GHRepo{}, err
	}
	base, push, err := r.githubRemotes(ctx, t, d)
	return d, base, push, err
}

// page cuts a page from a JSON array gh printed for limit items.
func page(out []byte, offset, limit int) (GHList, error) {
	var all []json.RawMessage
	if err := json.Unmarshal(out, &all); err != nil {
		return GHList{}, fmt.Errorf("%w: %v", errGHOutput, err)
	}
	l := GHList{Items: []json.RawMessage{}}
	if offset < len(all) {
		l.Items = all[offset:]
	}
	if len(all) == limit && limit < maxGHList {
		l.Next = limit
	}
	return l, nil
}

func pageLimit(offset int) (int, error) {
	if offset < 0 || offset >= maxGHList {
		return 0, ErrGHBadParams
	}
	return min(offset+GHPage, maxGHList), nil
}

// GitHubList lists the project's issues, pull requests or CI runs (kind),
// open, closed, merged or all (state; runs have none), a page from offset.
func (r *Repo) GitHubList(ctx context.Context, t trust.Trust, kind, state string, offset int) (*GHList, error) {
	l, ok := ghLists[kind]
	if !ok {
		return nil, ErrGHBadParams
	}
	limit, err := pageLimit(offset)
	if err != nil {
		return nil, err
	}
	d, pin, _, err := r.ghStart(ctx, t, readGate, "see it on GitHub")
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
		return nil, ErrGHBadParams
	}
	out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: args})
	if err != nil {
		return nil, err
	}
	p, err := page(out, offset, limit)
	p.Repo = pin.FullName()
	return &p, err
}

// GitHubItem shows one issue, pull request (with its checks and reviews)
// or run (with its jobs).
func (r *Repo) GitHubItem(ctx context.Context, t trust.Trust, kind string, number int64) (json.RawMessage, error) {
	it, ok := ghItems[kind]
	if !ok || number <= 0 {
		return nil, ErrGHBadParams
	}
	d, pin, _, err := r.ghStart(ctx, t, readGate, "see it on GitHub")
	if err != nil {
		return nil, err
	}
	out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: []string{it.cmd, "view", strconv.FormatInt(number, 10), "--repo", pin.String(), "--json", it.fields}})
	if err != nil {
		return nil, err
	}
	if !json.Valid(out) {
		return nil, errGHOutput
	}
	return json.RawMessage(out), nil
}

// ghText checks a device's text for GitHub: valid UTF-8, no NUL, within
// max bytes, and not empty unless allowed.
func ghText(s string, max int, empty bool) error {
	if len(s) > max || !utf8.ValidString(s) || strings.ContainsRune(s, 0) || !empty && strings.TrimSpace(s) == "" {
		return ErrGHText
	}
	return nil
}

// GitHubSearch finds the project's issues and pull requests matching
// query, in GitHub's search syntax. The query goes after "--", so it is
// never read as an option. GitHub reads qualifiers in it (is:open,
// author:x are useful), and several repo: qualifiers mean any of them, so
// a query naming another repository would reach it beside --repo's: what
// comes back is kept only when its address is the pinned repository's,
// whatever the query said.
func (r *Repo) GitHubSearch(ctx context.Context, t trust.Trust, query string, offset int) (*GHList, error) {
	if err := ghText(query, maxGHTitle, false); err != nil {
		return nil, err
	}
	limit, err := pageLimit(offset)
	if err != nil {
		return nil, err
	}
	d, pin, _, err := r.ghStart(ctx, t, readGate, "search it on GitHub")
	if err != nil {
		return nil, err
	}
	out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: []string{"search", "issues", "--repo", pin.FullName(), "--include-prs",
		"--json", "number,title,state,author,isPullRequest,updatedAt,url", "--limit", strconv.Itoa(limit), "--", query}, host: pin.Host})
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
		}
	}
	p.Items, p.Repo = kept, pin.FullName()
	return &p, nil
}

// ofRepo says whether a GitHub address is of the repository g: its web
// address followed by "/".
func ofRepo(u string, g GHRepo) bool {
	return strings.HasPrefix(strings.ToLower(u), strings.ToLower("https://"+g.Host+"/"+g.Owner+"/"+g.Name+"/"))
}

// GHDone is what a change on GitHub gave back: the address gh printed.
type GHDone struct {
	URL string `json:"url,omitempty"`
}

func done(out []byte) *GHDone {
	line := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if !strings.HasPrefix(line, "https://") || len(line) > 2048 {
		line = ""
	}
	return &GHDone{URL: line}
}

// GitHubComment comments on an issue or pull request; the text goes on
// stdin.
func (r *Repo) GitHubComment(ctx context.Context, t trust.Trust, number int64, body string) (*GHDone, error) {
	if number <= 0 {
		return nil, ErrGHBadParams
	}
	if err := ghText(body, MaxGHBody, false); err != nil {
		return nil, err
	}
	d, pin, _, err := r.ghStart(ctx, t, readGate, "comment on GitHub")
	if err != nil {
		return nil, err
	}
	out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: []string{"issue", "comment", strconv.FormatInt(number, 10), "--repo", pin.String(), "--body-file", "-"}, stdin: body})
	if err != nil {
		return nil, err
	}
	return done(out), nil
}

// PullDiff is a pull request's diff with secret (and, below full,
// hard-linked-by-name) sections dropped, as git.diff drops them.
func (r *Repo) PullDiff(ctx context.Context, t trust.Trust, g trust.Grant, number int64) (*Diff, error) {
	if number <= 0 {
		return nil, ErrGHBadParams
	}
	d, pin, _, err := r.ghStart(ctx, t, readGate, "see a pull request's diff")
	if err != nil {
		return nil, err
	}
	out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: []string{"pr", "diff", strconv.FormatInt(number, 10), "--repo", pin.String(), "--color=never"}})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	df := &Diff{}
	df.HiddenSecrets = r.filterPatch(&buf, out, viewer{t, g}, false)
	df.Diff, df.Truncated = cut(buf.Bytes(), false)
	return df, nil
}

// PullReview approves a pull request, asks for changes, or comments on it
// (event approve, request-changes or comment; the last two need text).
func (r *Repo) PullReview(ctx context.Context, t trust.Trust, number int64, event, body string) (*GHDone, error) {
	if number <= 0 || event != "approve" && event != "request-changes" && event != "comment" {
		return nil, ErrGHBadParams
	}
	if err := ghText(body, MaxGHBody, event == "approve"); err != nil {
		return nil, err
	}
	d, pin, _, err := r.ghStart(ctx, t, readGate, "review on GitHub")
	if err != nil {
		return nil, err
	}
	args := []string{"pr", "review", strconv.FormatInt(number, 10), "--repo", pin.String(), "--" + event}
	if body != "" {
		args = append(args, "--body-file", "-")
	}
	out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: args, stdin: body})
	if err != nil {
		return nil, err
	}
	return done(out), nil
}

// PullMerge merges a pull request with the first way the repository
// allows (merge commit, squash, rebase). gh may run git in the checkout
// for it, so the checkout passes the Change gate first: a config that
// would run a program is refused for a closed caller.
func (r *Repo) PullMerge(ctx context.Context, t trust.Trust, number int64) (*GHDone, error) {
	if number <= 0 {
		return nil, ErrGHBadParams
	}
	d, pin, _, err := r.ghStart(ctx, t, changeGate, "merge a pull request")
	if err != nil {
		return nil, err
	}
	out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: []string{"repo", "view", pin.String(), "--json", "mergeCommitAllowed,squashMergeAllowed,rebaseMergeAllowed"}})
	if err != nil {
		return nil, err
	}
	var allowed struct{ MergeCommitAllowed, SquashMergeAllowed, RebaseMergeAllowed bool }
	if err := json.Unmarshal(out, &allowed); err != nil {
		return nil, fmt.Errorf("%w: %v", errGHOutput, err)
	}
	method := ""
	switch {
	case allowed.MergeCommitAllowed:
		method = "--merge"
	case allowed.SquashMergeAllowed:
		method = "--squash"
	case allowed.RebaseMergeAllowed:
		method = "--rebase"
	default:
		return nil, ErrGHNoMergeMethod
	}
	out, err = runGH(ctx, r.ghPath, r, t, d, ghCall{args: []string{"pr", "merge", strconv.FormatInt(number, 10), "--repo", pin.String(), method}, timeout: ghSlowTimeout})
	if err != nil {
		return nil, err
	}
	return &GHDone{URL: done(out).URL}, nil
}

// PullCreateOptions describe a new pull request: its title and text, and
// the branch it goes into ("" is the base repository's default branch,
// also for a fork's).
type PullCreateOptions struct {
	Title, Body, Base string
}

// PullCreate pushes the current branch (as git.push does, through the
// gate) and opens a pull request from it into the base repository; from a
// fork the head is named owner:branch.
func (r *Repo) PullCreate(ctx context.Context, t trust.Trust, o PullCreateOptions) (*GHDone, error) {
	if err := ghText(o.Title, maxGHTitle, false); err != nil || strings.ContainsAny(o.Title, "\r\n") {
		return nil, ErrGHText
	}
	if err := ghText(o.Body, MaxGHBody, true); err != nil {
		return nil, err
	}
	if o.Base != "" && !ValidBranch(o.Base) {
		return nil, ErrBadRef
	}
	unlock, err := r.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, pin, pushRepo, err := r.ghStart(ctx, t, changeGate, "open a pull request")
	if err != nil {
		return nil, err
	}
	st, err := r.status(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if st.Branch == "" {
		return nil, ErrDetached
	}
	if !ValidBranch(st.Branch) {
		return nil, ErrBadRef
	}
	if err := r.push(ctx, t, d); err != nil {
		return nil, err
	}
	base := o.Base
	if base == "" {
		out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: []string{"repo", "view", pin.String(), "--json", "defaultBranchRef"}})
		if err != nil {
			return nil, err
		}
		var v struct{ DefaultBranchRef struct{ Name string } }
		if json.Unmarshal(out, &v) != nil || !ValidBranch(v.DefaultBranchRef.Name) {
			return nil, errGHOutput
		}
		base = v.DefaultBranchRef.Name
	}
	head := st.Branch
	if pushRepo.FullName() != pin.FullName() {
		head = pushRepo.Owner + ":" + st.Branch
	}
	out, err := runGH(ctx, r.ghPath, r, t, d, ghCall{args: []string{"pr", "create", "--repo", pin.String(), "--head", head, "--base", base,
		"--title=" + o.Title, "--body-file", "-"}, stdin: o.Body, timeout: ghSlowTimeout})
	if err != nil {
		return nil, err
	}
	return done(out), nil
}

// GHRepos lists the signed-in account's repositories (for a clone), a
// page from offset. gh runs outside every checkout for it.
func GHRepos(ctx context.Context, ghPath string, offset int) (*GHList, error) {
	limit, err := pageLimit(offset)
	if err != nil {
		return nil, err
	}
	out, err := runGH(ctx, ghBinary(ghPath), nil, trust.Desktop(), nil, ghCall{args: []string{"repo", "list", "--json", "nameWithOwner,description,isPrivate,updatedAt,url", "--limit", strconv.Itoa(limit)}})
	if err != nil {
		return nil, err
	}
	p, err := page(out, offset, limit)
	return &p, err
}

var (
	ErrBadRepoName = refusal.New(refusal.BadParams, "bad repository name",
		"Name a GitHub repository as owner/name.")
	ErrNoCloneFolder = refusal.New(refusal.Refused, "no free clone folder",
		"Every folder name for this repository in the clones folder is taken. Remove old clones on the computer.")
)

// maxCloneNames bounds the -2, -3 … tried for a clone's folder.
const maxCloneNames = 99

// cloneTimeout bounds one clone.
const cloneTimeout = 10 * time.Minute

// ParseRepoName reads "owner/name" (or "host/owner/name" on a GitHub
// host) as gh's repository names.
func ParseRepoName(s string) (GHRepo, error) {
	parts := strings.Split(s, "/")
	host := ghHosts()[len(ghHosts())-1] // GH_HOST when set, else github.com
	if len(parts) == 3 {
		host, parts = strings.ToLower(parts[0]), parts[1:]
	}
	if len(parts) != 2 || !ghNamePart(parts[0]) || !ghNamePart(parts[1]) || !onGitHubHost(host) {
		return GHRepo{}, ErrBadRepoName
	}
	return GHRepo{Host: host, Owner: parts[0], Name: parts[1]}, nil
}

// CloneFolder is a folder claimed for one clone, held open: the folder
// and the clones folder it is in, by descriptor, so removing a failed
// clone removes that folder's content and that folder, whatever is renamed
// or swapped for a symlink by path meanwhile.
type CloneFolder struct {
	Path   string
	name   string
	parent int // the clones folder
	fd     int // the claimed folder
	// toolWritableForTest are folders a test's fake gh may write in,
	// inside the kernel wall.
	toolWritableForTest []string
}

// ClaimCloneFolder makes a new, empty folder for a clone of repo in
// clones: the repository's name, or name-2, name-3 … when taken. Making it
// is the claim (mkdirat fails on a name that exists, whoever made it), so
// two clones never share a folder and nothing there is ever overwritten.
func ClaimCloneFolder(clones string, repo GHRepo) (*CloneFolder, error) {
	if err := os.MkdirAll(clones, 0o755); err != nil {
		return nil, fmt.Errorf("clones folder: %w", err)
	}
	parent, err := unix.Open(clones, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("clones folder: %w", err)
	}
	for i := 1; i <= maxCloneNames; i++ {
		name := repo.Name
		if i > 1 {
			name = fmt.Sprintf("%s-%d", repo.Name, i)
		}
		err := unix.Mkdirat(parent, name, 0o755)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			unix.Close(parent)
			return nil, fmt.Errorf("clone folder: %w", err)
		}
		fd, err := unix.Openat(parent, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(parent)
			return nil, fmt.Errorf("clone folder: %w", err)
		}
		return &CloneFolder{Path: filepath.Join(clones, name), name: name, parent: parent, fd: fd}, nil
	}
	unix.Close(parent)
	return nil, ErrNoCloneFolder
}

// Close lets go of the folder, leaving it as it is.
func (f *CloneFolder) Close() {
	unix.Close(f.fd)
	unix.Close(f.parent)
}

// Remove removes what the clone wrote in its folder and the folder itself,
// through the descriptors held since the claim (never following a link),
// and lets go of it.
func (f *CloneFolder) Remove() error {
	defer f.Close()
	if err := removeAllAt(f.fd, 0); err != nil {
		return err
	}
	return unix.Unlinkat(f.parent, f.name, unix.AT_REMOVEDIR)
}

// removeAllAt empties the open folder fd, depth first, by name relative to
// it: a symlink is removed, never followed.
func removeAllAt(fd, depth int) error {
	if depth > 512 {
		return errors.New("clone folder: too deep to remove")
	}
	d, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	dir := os.NewFile(uintptr(d), "clone")
	defer dir.Close()
	if _, err := unix.Seek(d, 0, 0); err != nil {
		return err
	}
	for {
		ents, err := dir.ReadDir(256)
		for _, e := range ents {
			if e.IsDir() {
				sub, err := unix.Openat(fd, e.Name(), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					return err
				}
				err = removeAllAt(sub, depth+1)
				unix.Close(sub)
				if err != nil {
					return err
				}
				if err := unix.Unlinkat(fd, e.Name(), unix.AT_REMOVEDIR); err != nil {
					return err
				}
			} else if err := unix.Unlinkat(fd, e.Name(), 0); err != nil {
				return err
			}
		}
		if err != nil || len(ents) == 0 {
			return nil
		}
	}
}

// Clone clones repo into the claimed folder with the user's gh, which picks
// their protocol and adds upstream for a fork. Its git gets the closed
// gate's options when t is closed; submodules are not cloned. When the
// clone fails, the folder and what the clone wrote in it are removed (and
// nothing else: see CloneFolder); either way the folder is let go.
func Clone(ctx context.Context, ghPath string, t trust.Trust, repo GHRepo, f *CloneFolder) error {
	_, err := runGH(ctx, ghBinary(ghPath), nil, t, nil, ghCall{args: []string{"repo", "clone", repo.String(), f.Path, "--", "--no-recurse-submodules"}, timeout: cloneTimeout, host: repo.Host,
		writable: append([]string{f.Path}, f.toolWritableForTest...)})
	if err != nil {
		if rmErr := f.Remove(); rmErr != nil {
			return errors.Join(err, rmErr)
		}
		return err
	}
	f.Close()
	return nil
}
