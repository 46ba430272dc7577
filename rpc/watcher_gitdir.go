package rpc

// The git folder's shape: while the watcher runs, the gate's closed
// decisions trust the last walk of the checkout's git folder until the
// kernel reports a change in it, instead of a stat of each of its folders
// at every call (gate/shapewatch.go). The cover is the gate's own inotify
// instance, read by the deciding call itself: the kernel queues an event
// before the change's system call returns, so a call that finds its queue
// empty has seen every change made before it, with no round trip through
// this watcher's loop (sync, about 0.25 ms, would cost more than the stats
// it replaces). The watcher only opens and closes it with its own life.

// coverGitFolder opens the cover of the git folder's shape for as long as
// the watcher runs; a checkout the gate cannot cover (gate.Repo.WatchShape)
// is checked as without it.
func (w *watcher) coverGitFolder() {
	if w.t.Repo != nil {
		w.shape = w.t.Repo.WatchShape()
	}
}

// uncoverGitFolder ends the cover: decisions stat every folder again.
func (w *watcher) uncoverGitFolder() { w.shape.Close() }
