package github

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

var (
	// ErrAlreadyMerging: another pull.merge of the same pull request is
	// running. The seed's sentence; a later retry finds it merged.
	ErrAlreadyMerging = refusal.New(refusal.Busy, "pull request already being merged",
		"This pull request is already being merged.")
	// ErrMergeMethod: the repository does not allow the way asked for.
	ErrMergeMethod = refusal.New(refusal.Refused, "merge method not allowed",
		"This repository does not allow that way of merging on GitHub.")
	// ErrNoSuchFile: pull.file named a file the pull request's diff (as
	// this device may see it) does not have.
	ErrNoSuchFile = refusal.New(refusal.NotFound, "no such file in the pull request",
		"This pull request changes no such file, or it is not shown on this device.")
)

// mergeMethods are the ways GitHub merges, in the order today's default
// takes the first allowed, each with gh's flag and GitHub's repository
// field (gh repo view's name for it).
var mergeMethods = []mergeMethod{
	{"merge", "--merge", "This repository does not allow merge commits on GitHub."},
	{"squash", "--squash", "This repository does not allow squash merges on GitHub."},
	{"rebase", "--rebase", "This repository does not allow rebase merges on GitHub."},
}

type mergeMethod struct{ name, flag, sentence string }

// methodIndex is name's place in mergeMethods, or -1.
func methodIndex(name string) int {
	return slices.IndexFunc(mergeMethods, func(m mergeMethod) bool { return m.name == name })
}

// allowedMethods asks GitHub (through gh, pinned) which ways the repository
// allows, in mergeMethods' order.
func allowedMethods(ctx context.Context, gh *gate.GH, pin Repo) ([]string, error) {
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"repo", "view", pin.String(), "--json", "mergeCommitAllowed,squashMergeAllowed,rebaseMergeAllowed"}})
	if err != nil {
		return nil, err
	}
	var a struct{ MergeCommitAllowed, SquashMergeAllowed, RebaseMergeAllowed bool }
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, fmt.Errorf("%w: %v", gate.ErrGHOutput, err)
	}
	var m []string
	for i, ok := range []bool{a.MergeCommitAllowed, a.SquashMergeAllowed, a.RebaseMergeAllowed} {
		if ok {
			m = append(m, mergeMethods[i].name)
		}
	}
	return m, nil
}

// merging holds the pull requests being merged now, by repository and
// number: one merge per pull request at a time, whoever asks.
var merging = struct {
	sync.Mutex
	now map[string]bool
}{now: map[string]bool{}}

// claimMerge claims pull request number of pin for one merge, or refuses
// with the seed's sentence while another holds it.
func claimMerge(pin Repo, number int64) (release func(), err error) {
	key := strings.ToLower(pin.String()) + "#" + strconv.FormatInt(number, 10)
	merging.Lock()
	defer merging.Unlock()
	if merging.now[key] {
		return nil, ErrAlreadyMerging
	}
	merging.now[key] = true
	return func() {
		merging.Lock()
		delete(merging.now, key)
		merging.Unlock()
	}, nil
}

// PullMergeOptions choose how a pull request is merged: Method merge,
// squash or rebase ("": the first the repository allows), and for a squash
// or merge commit its Subject and Body ("": GitHub's own defaults, the
// pull request's title with its number and its commits' messages).
type PullMergeOptions struct {
	Method, Subject, Body string
}

// PullMerge merges a pull request the way o names, once the repository is
// known to allow it; one merge per pull request runs at a time (a second is
// refused with ErrAlreadyMerging). gh may run git in the checkout for it,
// so the checkout passes the Change gate first: a config that would run a
// program is refused for a closed caller.
func PullMerge(ctx context.Context, r *gate.Repo, t trust.Trust, number int64, o PullMergeOptions) (*Done, error) {
	if number <= 0 || o.Method != "" && methodIndex(o.Method) < 0 {
		return nil, ErrBadParams
	}
	if err := checkText(o.Subject, maxTitle, true); err != nil || strings.ContainsAny(o.Subject, "\r\n") || o.Method == "rebase" && o.Subject != "" {
		return nil, ErrText
	}
	if err := checkText(o.Body, MaxBody, true); err != nil || o.Method == "rebase" && o.Body != "" {
		return nil, ErrText
	}
	gh, pin, _, err := start(ctx, r, t, true, "merge a pull request")
	if err != nil {
		return nil, err
	}
	release, err := claimMerge(pin, number)
	if err != nil {
		return nil, err
	}
	defer release()
	allowed, err := allowedMethods(ctx, gh, pin)
	if err != nil {
		return nil, err
	}
	method := o.Method
	switch {
	case method == "" && len(allowed) == 0:
		return nil, ErrNoMergeMethod
	case method == "":
		method = allowed[0]
	}
	i := methodIndex(method)
	if !slices.Contains(allowed, method) {
		return nil, refusal.Errorf(ErrMergeMethod, "%s", mergeMethods[i].sentence)
	}
	args := []string{"pr", "merge", strconv.FormatInt(number, 10), "--repo", pin.String(), mergeMethods[i].flag}
	if o.Subject != "" {
		args = append(args, "--subject="+o.Subject)
	}
	if o.Body != "" {
		args = append(args, "--body-file", "-")
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: args, Stdin: o.Body, Timeout: slowTimeout})
	if err != nil {
		return nil, err
	}
	return &Done{URL: done(out).URL}, nil
}

// maxBranches bounds the branches PullOptions lists (GitHub's largest page).
const maxBranches = 100

// PullOptions is what the page offers when opening or merging a pull
// request: the ways the repository allows merging, and its branches for a
// base, the default branch first.
type PullOptions struct {
	Repo          string   `json:"repo"`
	DefaultBranch string   `json:"defaultBranch"`
	Branches      []string `json:"branches"`
	Methods       []string `json:"methods"`
}

// Options reads PullOptions from GitHub: gh repo view for the default
// branch and the merge methods, gh api (GH_HOST the pinned repository's host) for the first 100
// branches; a name
// git would not take as a branch is left out.
func Options(ctx context.Context, r *gate.Repo, t trust.Trust) (*PullOptions, error) {
	gh, pin, _, err := start(ctx, r, t, false, "see it on GitHub")
	if err != nil {
		return nil, err
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"repo", "view", pin.String(), "--json", "defaultBranchRef,mergeCommitAllowed,squashMergeAllowed,rebaseMergeAllowed"}})
	if err != nil {
		return nil, err
	}
	var v struct {
		DefaultBranchRef                                           struct{ Name string }
		MergeCommitAllowed, SquashMergeAllowed, RebaseMergeAllowed bool
	}
	if json.Unmarshal(out, &v) != nil || !gate.ValidBranch(v.DefaultBranchRef.Name) {
		return nil, gate.ErrGHOutput
	}
	o := &PullOptions{Repo: pin.FullName(), DefaultBranch: v.DefaultBranchRef.Name, Branches: []string{v.DefaultBranchRef.Name}, Methods: []string{}}
	for i, ok := range []bool{v.MergeCommitAllowed, v.SquashMergeAllowed, v.RebaseMergeAllowed} {
		if ok {
			o.Methods = append(o.Methods, mergeMethods[i].name)
		}
	}
	out, err = gh.Run(ctx, gate.GHCall{Args: []string{"api", "repos/" + pin.FullName() + "/branches?per_page=" + strconv.Itoa(maxBranches)}, Host: pin.Host})
	if err != nil {
		return nil, err
	}
	var branches []struct{ Name string }
	if err := json.Unmarshal(out, &branches); err != nil {
		return nil, fmt.Errorf("%w: %v", gate.ErrGHOutput, err)
	}
	for _, b := range branches[:min(len(branches), maxBranches)] {
		if gate.ValidBranch(b.Name) && !slices.Contains(o.Branches, b.Name) {
			o.Branches = append(o.Branches, b.Name)
		}
	}
	return o, nil
}

// FilesPage is how many files pull.files answers at a time.
const FilesPage = 50

// PullFilesPage is a page of a pull request's changed files as a device may
// see them; HiddenSecrets counts the files left out of the whole diff.
type PullFilesPage struct {
	Files         []gate.PatchFile `json:"files"`
	Total         int              `json:"total"`
	Next          int              `json:"next,omitempty"`
	HiddenSecrets int              `json:"hiddenSecrets,omitempty"`
}

// pullPatch is a pull request's whole diff, cut into files as a viewer of
// grant g may see them (gate.GH.PatchFiles: the one visibility rule).
func pullPatch(ctx context.Context, r *gate.Repo, t trust.Trust, g trust.Grant, number int64) ([]gate.PatchFile, int, error) {
	if number <= 0 {
		return nil, 0, ErrBadParams
	}
	gh, pin, _, err := start(ctx, r, t, false, "see a pull request's diff")
	if err != nil {
		return nil, 0, err
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"pr", "diff", strconv.FormatInt(number, 10), "--repo", pin.String(), "--color=never"}})
	if err != nil {
		return nil, 0, err
	}
	files, hidden := gh.PatchFiles(g, out)
	return files, hidden, nil
}

// PullFiles lists a page of a pull request's changed files (name, status,
// lines added and deleted) from offset, secret files left out below full.
func PullFiles(ctx context.Context, r *gate.Repo, t trust.Trust, g trust.Grant, number int64, offset int) (*PullFilesPage, error) {
	if offset < 0 {
		return nil, ErrBadParams
	}
	files, hidden, err := pullPatch(ctx, r, t, g, number)
	if err != nil {
		return nil, err
	}
	p := &PullFilesPage{Files: []gate.PatchFile{}, Total: len(files), HiddenSecrets: hidden}
	if offset < len(files) {
		p.Files = files[offset:min(len(files), offset+FilesPage)]
	}
	if offset+FilesPage < len(files) {
		p.Next = offset + FilesPage
	}
	return p, nil
}

// PullFile is one file's diff in a pull request, cut at gate.MaxFileDiff;
// a file this device may not see is as absent as one the pull request does
// not change.
func PullFile(ctx context.Context, r *gate.Repo, t trust.Trust, g trust.Grant, number int64, path string) (*gate.Diff, error) {
	if path == "" || len(path) > 4096 {
		return nil, ErrBadParams
	}
	files, _, err := pullPatch(ctx, r, t, g, number)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.Path == path {
			d := &gate.Diff{}
			d.Diff, d.Truncated = gate.CutFileDiff(f.Text)
			return d, nil
		}
	}
	return nil, ErrNoSuchFile
}
