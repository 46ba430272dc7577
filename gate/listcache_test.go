package gate

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// listAsk is a stand-in for git's answer that counts how often it ran.
type listAsk struct {
	runs   int
	answer string
	size   int
	during func() // what happens while git answers
}

func (a *listAsk) ask() (any, int, error) {
	a.runs++
	if a.during != nil {
		a.during()
	}
	return a.answer, a.size, nil
}

func (a *listAsk) get(t *testing.T, r *Repo) string {
	t.Helper()
	v, err := r.cachedList(context.Background(), trust.Desktop(), openDecision, listUntracked, a.ask)
	if err != nil {
		t.Fatal(err)
	}
	return v.(string)
}

// TestListCacheFallbacks: each way the cache must ask git instead of
// answering (no watcher, a change racing git's answer, a watcher that
// cannot sync, an answer over the memory bound, a closed watch).
func TestListCacheFallbacks(t *testing.T) {
	gittest.Home(t, "")
	r := open(t, gittest.Init(t, nil))
	time.Sleep(2 * racyWindow) // past the new index's racy window
	a := &listAsk{answer: "one", size: 1}

	if a.get(t, r); a.get(t, r) != "one" || a.runs != 2 {
		t.Fatalf("no watcher: %d runs, want 2", a.runs)
	}

	synced := true
	w := r.Watch(func(context.Context) bool { return synced })
	a.runs = 0
	a.get(t, r)
	if a.get(t, r); a.runs != 1 {
		t.Fatalf("watched: %d runs, want 1", a.runs)
	}

	// A change the watcher reports while git answers: the answer is used
	// once and not kept, so the next call asks again.
	w.Changed()
	a.runs, a.answer = 0, "stale"
	a.during = w.Changed
	if got := a.get(t, r); got != "stale" {
		t.Fatalf("racing call got %q", got)
	}
	a.during, a.answer = nil, "fresh"
	if got := a.get(t, r); got != "fresh" || a.runs != 2 {
		t.Fatalf("after a racing change: %q after %d runs, want fresh after 2", got, a.runs)
	}
	if got := a.get(t, r); got != "fresh" || a.runs != 2 {
		t.Fatalf("then cached: %q after %d runs", got, a.runs)
	}

	// The watcher cannot tell it is up to date: ask git.
	synced = false
	if a.get(t, r); a.runs != 3 {
		t.Fatalf("unsynced: %d runs, want 3", a.runs)
	}
	synced = true

	// An answer over the bound is used, never kept.
	w.Changed()
	a.runs, a.size = 0, maxCachedList+1
	a.get(t, r)
	if a.get(t, r); a.runs != 2 {
		t.Fatalf("over the bound: %d runs, want 2", a.runs)
	}
	a.size = 1

	// A closed watch: every call asks.
	w.Close()
	a.runs = 0
	a.get(t, r)
	if a.get(t, r); a.runs != 2 {
		t.Fatalf("closed: %d runs, want 2", a.runs)
	}
}

// TestListCacheSources: the files outside the work tree the lists read
// (info/exclude, the index, the excludes file the config names) are
// checked at every use.
func TestListCacheSources(t *testing.T) {
	home := gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	r := open(t, dir)
	r.Watch(func(context.Context) bool { return true })
	excl := home + "/my-ignore"
	write(t, home, map[string]string{"my-ignore": "*.x\n"})
	git(t, dir, "config", "--global", "core.excludesFile", excl)
	time.Sleep(2 * racyWindow)
	a := &listAsk{answer: "one", size: 1}
	for i, change := range []func(){
		func() { write(t, dir, map[string]string{".git/info/exclude": "*.y\n"}) },
		func() { write(t, home, map[string]string{"my-ignore": "*.z\n"}) },
		func() { write(t, dir, map[string]string{"new.txt": "n\n"}); git(t, dir, "add", "new.txt") },
	} {
		a.get(t, r)
		a.runs = 0
		if a.get(t, r); a.runs != 0 {
			t.Fatalf("%d: unchanged: %d runs", i, a.runs)
		}
		change()
		time.Sleep(2 * racyWindow) // so only the identity can tell
		if a.get(t, r); a.runs != 1 {
			t.Fatalf("%d: a changed source was not noticed (%d runs)", i, a.runs)
		}
	}
}
