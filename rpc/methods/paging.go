package methods

import (
	"fmt"

	"github.com/gatehouse/gatehouse/gate"

	"github.com/gatehouse/gatehouse/rpc"
)

// maxPageOffset bounds the offset a paged list method accepts: no list a
// host gathers at once is longer (gate and fsguard bound them below it).
const maxPageOffset = 1_000_000

// searchPage bounds the names or lines on one page of a search or grep,
// as many as one answer held before it paged.
const searchPage = 500

// errBadOffset refuses an offset outside 0..maxPageOffset.
var errBadOffset = rpc.ParamError("offset", fmt.Sprintf("a whole number from 0 to %d", maxPageOffset))

// checkOffset is the one validator of a paged method's offset.
func checkOffset(offset int) error {
	if offset < 0 || offset > maxPageOffset {
		return errBadOffset
	}
	return nil
}

// pageOf returns the items from offset that fit the page budget beside
// base, the JSON size of the reply with no items (its next and truncated
// set, so they are counted), at most limit of them, and the offset of the
// next page (0 at the end). Each item is measured once: a JSON array of k
// items is 2 bytes plus the items plus k-1 commas, so the page is cut in
// one pass rather than by marshalling the whole list again and again.
func pageOf[T any](items []T, offset, base, limit int) ([]T, int) {
	if offset >= len(items) {
		return []T{}, 0
	}
	size, end := base, offset
	for end < len(items) && end-offset < limit {
		n := rpc.JSONSize(items[end]) + 1
		if size+n > rpc.PageBudget {
			break
		}
		size += n
		end++
	}
	if end == offset {
		// An item alone over the budget (none is: paths and ref names are
		// bounded far below it) is skipped, so paging still ends.
		return []T{}, nextOf(end+1, len(items))
	}
	return items[offset:end], nextOf(end, len(items))
}

func nextOf(end, n int) int {
	if end < n {
		return end
	}
	return 0
}

// emptySize is the JSON size of a reply whose list is empty: the base
// pageOf measures items against. The caller sets next to its largest value
// first, so the page fits whatever offset it ends up naming.
func emptySize(v any) int { return rpc.JSONSize(v) }

// pageBranches cuts one page from the branch list, taken as Local then
// Remote (git's order: refs/heads sorts before refs/remotes).
func pageBranches(b *gate.Branches, offset int) *gate.Branches {
	all := append(append(make([]string, 0, len(b.Local)+len(b.Remote)), b.Local...), b.Remote...)
	nLocal := len(b.Local)
	page := &gate.Branches{Current: b.Current, Local: []string{}, Remote: []string{}, Truncated: b.Truncated, Next: maxPageOffset}
	part, next := pageOf(all, offset, emptySize(page), maxPageOffset)
	split := min(max(nLocal-offset, 0), len(part))
	page.Local, page.Remote, page.Next = part[:split], part[split:], next
	return page
}
