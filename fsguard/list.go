package fsguard

import (
	"io"
	"sort"

	"github.com/gatehouse/gatehouse/trust"
)

const (
	// ListPage is the most entries one listing reply carries.
	ListPage = 500
	// maxListScan bounds how many entries of one folder are read and sorted;
	// a folder with more is listed as truncated.
	maxListScan = 100_000
)

// Entry is one item of a folder listing.
type Entry struct {
	Name string `json:"name"`
	// Kind is "file", "dir", "symlink" or "other" (FIFO, socket, device).
	Kind string `json:"kind"`
	Size int64  `json:"size"`
	// Secret marks a secret file, or a symlink to one: its name is shown,
	// its content is not (below full).
	Secret bool `json:"secret,omitempty"`
}

// Listing is one page of a folder.
type Listing struct {
	Entries []Entry `json:"entries"`
	// Next is the offset of the next page, 0 at the end.
	Next int `json:"next,omitempty"`
	// Truncated: the folder holds more than gatehouse reads at once.
	Truncated bool `json:"truncated,omitempty"`
}

// List lists the folder unsafePath ("" for the root): folders first, then
// by name, ListPage at a time from offset. .git never appears. Secret files
// are listed with Secret set; their content stays refused below full.
func (r *Root) List(g trust.Grant, unsafePath string, offset int) (Listing, error) {
	a := access{op: "list", grant: g, root: true, namesOnly: true}
	if offset < 0 {
		return Listing{}, pathErr(a.op, unsafePath, ErrInvalidPath)
	}
	dir, rel, err := r.openDir(a, unsafePath)
	if err != nil {
		return Listing{}, err
	}
	defer dir.Close()
	var out Listing
	var all []Entry
	for len(all) < maxListScan {
		ents, err := dir.ReadDir(dirBatch)
		for _, e := range ents {
			if IsGitName(e.Name()) {
				continue
			}
			all = append(all, r.entry(int(dir.Fd()), rel, e.Name()))
		}
		if err == io.EOF || len(ents) == 0 {
			break
		}
		if err != nil {
			return Listing{}, pathErr(a.op, rel, err)
		}
	}
	out.Truncated = len(all) >= maxListScan
	sort.Slice(all, func(i, j int) bool {
		if di, dj := all[i].Kind == "dir", all[j].Kind == "dir"; di != dj {
			return di
		}
		return all[i].Name < all[j].Name
	})
	if offset < len(all) {
		end := min(offset+ListPage, len(all))
		out.Entries = all[offset:end]
		if end < len(all) {
			out.Next = end
		}
	}
	if out.Entries == nil {
		out.Entries = []Entry{}
	}
	return out, nil
}

func (r *Root) entry(dirfd int, dirRel, name string) Entry {
	e := Entry{Name: name, Kind: "other"}
	st, err := lstatAt(dirfd, name)
	if err != nil {
		return e
	}
	rel := joinRel(dirRel, name)
	switch {
	case isDir(&st):
		e.Kind = "dir"
	case isRegular(&st):
		e.Kind, e.Size = "file", st.Size
	case isLink(&st):
		e.Kind = "symlink"
	}
	e.Secret = r.isSecretEntry(rel, isLink(&st))
	return e
}

// isSecretEntry reports whether rel is a secret by name or, for a symlink,
// by what it resolves to (inside the root or out).
func (r *Root) isSecretEntry(rel string, link bool) bool {
	if _, ok := r.scope.Match(rel); ok {
		return true
	}
	if !link {
		return false
	}
	_, err := r.follow(access{grant: trust.View}, rel)
	return err == ErrSecret
}
