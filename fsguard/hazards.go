package fsguard

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// HazardKind names one kind of thing in a tree that gatehouse refuses or
// that could fool a person or a tool. The names are stable: audit uses them
// as rule ids.
type HazardKind string

const (
	HazardHardLink       HazardKind = "hard-link"       // a regular file with more than one link
	HazardSpecial        HazardKind = "special-file"    // a FIFO, socket or device
	HazardSymlinkOutside HazardKind = "symlink-outside" // a symlink that leads out of the tree
	HazardSymlinkSecret  HazardKind = "symlink-secret"  // a symlink to a secret file
	HazardSymlinkGit     HazardKind = "symlink-git"     // a symlink into .git
	HazardSymlinkLoop    HazardKind = "symlink-loop"    // a symlink chain too long to follow
	HazardGitLookalike   HazardKind = "git-lookalike"   // .GIT, .git., git~1: .git on another file system
	HazardNestedGit      HazardKind = "nested-git"      // a .git below the top: another repository inside
	HazardControlChar    HazardKind = "control-char"    // a name with a control character
	HazardLeadingDash    HazardKind = "leading-dash"    // a name a tool may read as an option
)

// Hazard is one finding of the tree scan.
type Hazard struct {
	Kind HazardKind `json:"kind"`
	Path string     `json:"path"` // relative to the root
	// Detail says more, for the person at the computer (where a symlink
	// leads, which secret rule). It may name places on this computer.
	Detail string `json:"detail,omitempty"`
}

// maxHazardEntries bounds the entries one scan looks at.
const maxHazardEntries = 5_000_000

// Hazards walks the whole tree (never into .git) and reports what in it the
// gate would refuse or a tool could be fooled by. It is for the person at the
// computer (audit), not for a device. truncated says the scan stopped at its
// bounds or when ctx ended.
func (r *Root) Hazards(ctx context.Context) (found []Hazard, truncated bool) {
	var mu sync.Mutex
	add := func(h Hazard) {
		mu.Lock()
		found = append(found, h)
		mu.Unlock()
	}
	lim := walkLimits{maxEntries: maxHazardEntries, gitNames: true}
	truncated = r.walk(ctx, lim, func(dirfd int, dir string, ents []fs.DirEntry) bool {
		for _, e := range ents {
			r.hazardsOf(dirfd, dir, e, add)
		}
		return true
	})
	sort.Slice(found, func(i, j int) bool {
		if found[i].Path != found[j].Path {
			return found[i].Path < found[j].Path
		}
		return found[i].Kind < found[j].Kind
	})
	return found, truncated
}

func (r *Root) hazardsOf(dirfd int, dir string, e fs.DirEntry, add func(Hazard)) {
	name := e.Name()
	rel := joinRel(dir, name)
	switch {
	case name == ".git" && dir == ".":
		return // the repository itself
	case name == ".git":
		add(Hazard{Kind: HazardNestedGit, Path: rel})
		return
	case IsGitName(name):
		add(Hazard{Kind: HazardGitLookalike, Path: rel, Detail: "a file system that folds case or drops trailing dots reads this as .git"})
		return
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		add(Hazard{Kind: HazardControlChar, Path: rel})
	}
	if strings.HasPrefix(name, "-") {
		add(Hazard{Kind: HazardLeadingDash, Path: rel})
	}
	t := e.Type()
	switch {
	case t.IsDir():
	case t.IsRegular():
		if st, err := lstatAt(dirfd, name); err == nil && hardLinked(&st) {
			add(Hazard{Kind: HazardHardLink, Path: rel, Detail: fmt.Sprintf("%d links", st.Nlink)})
		}
	case t&fs.ModeSymlink != 0:
		r.linkHazard(rel, add)
	default:
		add(Hazard{Kind: HazardSpecial, Path: rel, Detail: specialKind(t)})
	}
}

func (r *Root) linkHazard(rel string, add func(Hazard)) {
	res, err := r.resolve(rel)
	switch err {
	case ErrOutsideRoot:
		if rule, ok := r.scope.MatchAbs(res.outside); ok {
			add(Hazard{Kind: HazardSymlinkSecret, Path: rel, Detail: "leads to " + res.outside + " (" + rule.Pattern + ")"})
		}
		add(Hazard{Kind: HazardSymlinkOutside, Path: rel, Detail: "leads to " + res.outside})
		return
	case ErrTooManyLinks:
		add(Hazard{Kind: HazardSymlinkLoop, Path: rel})
		return
	case nil:
	default:
		return // dangling: harmless
	}
	if hasGitSegment(res.rel) {
		add(Hazard{Kind: HazardSymlinkGit, Path: rel, Detail: "leads to " + res.rel})
		return
	}
	if rule, ok := r.scope.Match(res.rel); ok {
		if _, named := r.scope.Match(rel); !named {
			add(Hazard{Kind: HazardSymlinkSecret, Path: rel, Detail: "leads to " + res.rel + " (" + rule.Pattern + ")"})
		}
	}
}

func specialKind(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "FIFO"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}
