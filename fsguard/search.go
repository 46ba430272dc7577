package fsguard

import (
	"context"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/trust"
)

const (
	// MaxQuery bounds a search or grep query, in bytes.
	MaxQuery = 1000
	// MaxSearchResults bounds the paths one name search gathers; a device
	// pages through them in sorted order, so all are gathered before any
	// page is cut.
	MaxSearchResults = 10_000
	// maxWalkEntries bounds the entries one search or grep looks at.
	maxWalkEntries = 2_000_000
)

// SearchResult is what a name search found.
type SearchResult struct {
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated,omitempty"`
	// Next is the offset of the next page, 0 at the end (set by the caller
	// that cuts the pages).
	Next int `json:"next,omitempty"`
}

// Search finds files and folders (a folder's path ends in "/") whose name contains query (at least two
// characters, any letter case) anywhere under the root. Below full, secret
// files (and symlinks to them) are left out. It stops at MaxSearchResults
// paths, at the walk's bounds, or when ctx ends, and then says truncated.
// Entries in skip (and everything under a folder there) are left out.
func (r *Root) Search(ctx context.Context, g trust.Grant, query string, skip Ignored) (SearchResult, error) {
	if err := r.allowRoot(g); err != nil {
		return SearchResult{}, pathErr("search", ".", err)
	}
	if len(query) > MaxQuery || !utf8.ValidString(query) {
		return SearchResult{}, pathErr("search", ".", ErrBadQuery)
	}
	if utf8.RuneCountInString(strings.TrimSpace(query)) < 2 {
		return SearchResult{}, pathErr("search", ".", ErrShortQuery)
	}
	want := strings.ToLower(query)
	var mu sync.Mutex
	res := SearchResult{Paths: []string{}}
	truncated := r.walk(ctx, walkLimits{maxEntries: maxWalkEntries, skip: skip}, func(_ int, dir string, ents []fs.DirEntry) bool {
		for _, e := range ents {
			if !strings.Contains(strings.ToLower(e.Name()), want) {
				continue
			}
			rel := joinRel(dir, e.Name())
			if !g.SeesSecrets() && r.isSecretEntry(rel, e.Type()&fs.ModeSymlink != 0) {
				continue
			}
			if e.IsDir() {
				rel += "/" // a folder, so a device opens it as one
			}
			mu.Lock()
			full := len(res.Paths) >= MaxSearchResults
			if !full {
				res.Paths = append(res.Paths, rel)
			}
			mu.Unlock()
			if full {
				return false
			}
		}
		return true
	})
	res.Truncated = truncated
	sort.Strings(res.Paths)
	return res, nil
}
