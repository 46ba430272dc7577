//go:build !linux

package gate

// ShapeWatch covers the git folder's shape with the kernel's change events
// on Linux (shapewatch.go). Elsewhere there is no cover: every closed
// decision re-stats each folder of the git folder (layout.go).
type ShapeWatch struct{}

// WatchShape gives no cover on this system.
func (r *Repo) WatchShape() *ShapeWatch { return nil }

// Close does nothing: there is no cover to end.
func (s *ShapeWatch) Close() {}

// Covered is false: there is no cover.
func (s *ShapeWatch) Covered() bool { return false }

type shapeState int

const shapeUncovered, shapeStale, shapeFresh shapeState = 0, 1, 2

func (s *ShapeWatch) state() shapeState        { return shapeUncovered }
func (s *ShapeWatch) begin(string) *ShapeWatch { return nil }
func (s *ShapeWatch) watch(string, uint64)     {}
func (s *ShapeWatch) end(bool)                 {}

// localFileSystem is false: the status monitor (fsmonitor.go) trusts a
// watcher's events only where shapewatch.go knows which file systems
// report every change.
func localFileSystem(string) bool { return false }
