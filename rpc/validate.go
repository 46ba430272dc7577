package rpc

import (
	"encoding/json"
	"unicode/utf8"
)

// Shared validators: a handler never writes its own.

// TextParam checks a text parameter: valid UTF-8, at most max bytes.
func TextParam(s string, max int) error {
	if len(s) > max || !utf8.ValidString(s) {
		return ErrBadParams
	}
	return nil
}

// IDsParam checks a list of ids: 1 to MaxIDs, each printable.
func IDsParam(ids []string) error {
	if len(ids) == 0 || len(ids) > MaxIDs {
		return ErrBadParams
	}
	for _, id := range ids {
		if !printable(id, 1, 64) {
			return ErrBadParams
		}
	}
	return nil
}

// Fit keeps as many of n items as fit the page budget: size(k) is the JSON
// size of the reply holding the first k. It returns k and whether items
// were dropped.
func Fit(n int, size func(k int) int) (int, bool) {
	if size(n) <= PageBudget {
		return n, false
	}
	lo, hi := 0, n // size(lo) fits (or lo == 0), size(hi) does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if size(mid) <= PageBudget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, true
}

// JSONSize is the encoded size of v.
func JSONSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return PageBudget + 1
	}
	return len(b)
}
