//go:build linux

package gate

// The git folder's shape between calls, from the kernel's change events.
//
// After its first walk, the shape check (layout.go) re-stats every folder
// of the git folder before every closed decision: one fstatat each, 12
// after a gc and 268 with loose objects, 13-360 µs of a decision that
// costs 4 µs without it. While a ShapeWatch covers the git folder, the
// decision asks the kernel instead whether anything the walk looked at
// has changed since it walked, at the cost of one poll(2), and walks again
// when something has.
//
// Why a change made before the call is always seen. The watch is an
// inotify instance of its own, read by the deciding call itself (no
// goroutine, no channel): the kernel queues an inotify event inside the
// system call that makes the change (the link, mknod, rename, unlink,
// chmod), before that call returns. So when the call finds the queue
// empty, no watched folder has changed before it, and when the queue
// holds an event, the cached shape is dropped and the folder walked again.
// The drain is the barrier. The serve's own watcher could not serve here:
// it hands events through fsnotify's goroutine and a channel, so knowing
// that every event queued before a call has been handled takes a round
// trip through its queue (rpc's sync, about 0.25 ms), sixteen times the
// fstatat walk it would replace on a gc'd git folder; a generation counter
// read without that barrier would miss a change whose event the loop had
// not reached yet, and the loop can be kept busy on purpose (a large folder
// created in the work tree is walked by it).
//
// Why the watch covers what the walk looks at. Each folder is watched
// before it is listed (layoutWalk.walk), for entries created, removed or
// renamed in it, its own mode and times (IN_ATTRIB), and its own removal or
// move. So for every folder the cached walk listed, a change after the
// listing queued an event, and a change before it was seen by the listing:
//
//   - a folder swapped for a symlink, a file, a FIFO, a socket or a device
//     planted, a name renamed over another: created, removed or moved
//     entries of a watched folder;
//   - a new folder (refs/heads/topic/) and anything then made inside it:
//     its creation is an event, the walk that follows watches it before
//     listing it, and what is made in it after that is its own event;
//   - a folder swapped between its watch and its listing: the swap is an
//     event of its parent, watched and listed before it;
//   - the git folder itself renamed or removed: its own IN_MOVE_SELF or
//     IN_DELETE_SELF (and the decision's lstat of its path, decide.go, as
//     without the watch);
//   - a folder made unreadable: IN_ATTRIB;
//   - a file system mounted over a folder, which changes no folder's
//     entries: the mount table of this process's namespace, polled in the
//     same poll(2) (the kernel flags /proc/self/mountinfo POLLPRI on every
//     mount and unmount); and a folder already on another file system than
//     the git folder's top when the walk lists it ends the cover;
//   - events lost to a full queue: the kernel queues IN_Q_OVERFLOW, which
//     drops the shape like any event, and the walk after it sees every
//     change made before it.
//
// What the watch does not see, the decision keeps checking at every call,
// as without it: the alternates files' size and the config files' identity
// (a file is written in place through a descriptor or a second name opened
// elsewhere without an event in its folder here: inotify reports a write
// to the folder the writer opened it through), and the identity of the git
// folder's path. A second link made to a file of the git folder from
// outside it changes no folder and queues no event here; re-stating folders
// does not see it either (it changes no folder's times), so neither way
// catches it between walks, and the kernel wall stands behind both.
//
// Where the watch cannot vouch for what it sees, it does not cover: inotify
// reports only changes made through this kernel, so a git folder on a
// network or shared file system (NFS, SMB, FUSE, 9p and virtiofs shares,
// where another machine writes) is not covered; nor is one with a folder on
// another file system, nor one with more than maxShapeWatches folders, nor
// one where a folder cannot be watched (the user's inotify watches used
// up). A watch that stops covering closes, and the decision re-stats every
// folder as before (layout.go's shapeUnchanged) until the serve opens a
// new one.

import (
	"encoding/binary"
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maxShapeWatches bounds the folders one watch keeps watched: each is a
// watch of the user's inotify allowance (and some kernel memory). A git
// folder after a gc has about a dozen; loose objects add up to 256.
const maxShapeWatches = 4096

// maxShapeDrainReads bounds one drain: 128 reads of 64 KiB hold more than
// the kernel's queue (16,384 events by default). Past it the shape is
// dropped and the rest waits for the next call.
const maxShapeDrainReads = 128

// shapeEvents are the changes a watched folder reports: entries created,
// removed or moved, its own mode, owner and times (a folder made
// unreadable), and its own removal or move. The walk reads no content, but
// a file written in place (a ref or HEAD edited by hand, FETCH_HEAD) is
// reported too: the status kept between calls (fsmonitor.go) depends on
// every file of the git folder.
const shapeEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MODIFY

// localFileSystems are the file systems whose every change goes through
// this kernel (the kernel's magic numbers, statfs's f_type): only there do
// inotify's events say everything that changed.
var localFileSystems = map[int64]string{
	unix.EXT4_SUPER_MAGIC:     "ext2/3/4",
	unix.XFS_SUPER_MAGIC:      "xfs",
	unix.BTRFS_SUPER_MAGIC:    "btrfs",
	unix.TMPFS_MAGIC:          "tmpfs",
	unix.F2FS_SUPER_MAGIC:     "f2fs",
	unix.BCACHEFS_SUPER_MAGIC: "bcachefs",
	0x2fc12fc1:                "zfs",
}

// ShapeWatch is a file watcher's cover of a checkout's git folder: while it
// is open, a closed decision trusts the last walk of the git folder's shape
// until the kernel reports a change (see the comment above). The serve's
// watcher (rpc/watcher_gitdir.go) opens one per served checkout.
type ShapeWatch struct {
	r *Repo

	// Guarded by r.shape.mu.
	fd     int            // the inotify instance; -1 once closed
	mounts int            // /proc/self/mountinfo, polled for mounts
	wds    map[int32]bool // the folders watched, by watch descriptor
	// walked: the cached verdict comes from a walk that watched every
	// folder before listing it, and no event has arrived since.
	walked bool
	// Set by the walk under way.
	seen   map[int32]bool // the watches it added or met again
	topDev uint64         // the git folder's device
	failed bool           // a folder it could not watch
	buf    []byte         // drain's
	// limit is maxShapeWatches; a test lowers it.
	limit int
	// invalidationOffForTest reads the events and ignores them, so a test
	// shows what a cover that trusts a stale shape lets through.
	invalidationOffForTest bool
}

// WatchShape opens a cover of the git folder's shape for a caller that
// watches the checkout for as long as it runs, and closes the one opened
// before. It returns nil where the kernel cannot give one (another system
// than Linux, the user's inotify instances used up, a git folder on a file
// system whose changes may not go through this kernel); decisions then
// re-stat every folder, as without it. The first closed decision after it
// walks the git folder.
func (r *Repo) WatchShape() *ShapeWatch {
	if !localFileSystem(r.commonDir) {
		return nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Close(fd)
		return nil
	}
	s := &ShapeWatch{r: r, fd: fd, mounts: mounts, wds: map[int32]bool{}, limit: maxShapeWatches}
	r.shape.mu.Lock()
	old := r.shape.watch
	r.shape.watch = s
	r.shape.mu.Unlock()
	old.Close()
	return s
}

// Close ends the cover: decisions re-stat every folder again. Safe on nil
// and more than once.
func (s *ShapeWatch) Close() {
	if s == nil {
		return
	}
	s.r.shape.mu.Lock()
	defer s.r.shape.mu.Unlock()
	s.closeLocked()
}

// Covered reports whether the watch is still open (it closes itself when
// it can no longer vouch for the folder).
func (s *ShapeWatch) Covered() bool {
	if s == nil {
		return false
	}
	s.r.shape.mu.Lock()
	defer s.r.shape.mu.Unlock()
	return s.fd >= 0
}

func (s *ShapeWatch) closeLocked() {
	if s.fd < 0 {
		return
	}
	_ = unix.Close(s.fd)
	_ = unix.Close(s.mounts)
	s.fd, s.mounts, s.wds, s.walked = -1, -1, nil, false
	if s.r.shape.watch == s {
		s.r.shape.watch = nil
	}
}

// shapeState is what the watch says of the cached walk.
type shapeState int

const (
	shapeUncovered shapeState = iota // no watch: re-stat every folder
	shapeStale                       // covered, and something changed (or no watched walk yet): walk
	shapeFresh                       // covered, nothing changed since the walk
)

// state drains the queue and says whether the cached walk still holds.
// Called with r.shape.mu held.
func (s *ShapeWatch) state() shapeState {
	if s == nil || s.fd < 0 {
		return shapeUncovered
	}
	changed, err := s.drain()
	if err != nil {
		s.closeLocked()
		return shapeUncovered
	}
	if changed && !s.invalidationOffForTest {
		s.walked = false
	}
	if !s.walked {
		return shapeStale
	}
	return shapeFresh
}

// drain reads every event queued, in one poll(2) when there is none, and
// reports whether any can have changed the shape: an event of a watched
// folder, a lost event, a mount or unmount.
func (s *ShapeWatch) drain() (changed bool, err error) {
	fds := [2]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(s.mounts), Events: unix.POLLPRI}}
	for {
		_, err = unix.Poll(fds[:], 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return false, err
	}
	changed = fds[1].Revents&(unix.POLLPRI|unix.POLLERR) != 0
	if fds[1].Revents&unix.POLLNVAL != 0 || fds[0].Revents&(unix.POLLERR|unix.POLLNVAL) != 0 {
		return false, errShapeWatch
	}
	if fds[0].Revents&unix.POLLIN == 0 {
		return changed, nil
	}
	if s.buf == nil {
		s.buf = make([]byte, 64<<10)
	}
	for range maxShapeDrainReads {
		n, err := unix.Read(s.fd, s.buf)
		switch {
		case err == unix.EAGAIN:
			return changed, nil
		case err == unix.EINTR:
			continue
		case err != nil:
			return false, err
		}
		c, err := s.events(s.buf[:n])
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return true, nil
}

var errShapeWatch = errors.New("gate: malformed or failed inotify read")

// events reads inotify records (wd 4, mask 4, cookie 4, len 4, then the
// name): every one says the shape may have changed, but the removal of a
// watch the walk dropped itself (IN_IGNORED for a descriptor no longer
// kept).
func (s *ShapeWatch) events(buf []byte) (changed bool, err error) {
	for len(buf) > 0 {
		if len(buf) < unix.SizeofInotifyEvent {
			return false, errShapeWatch
		}
		wd := int32(binary.NativeEndian.Uint32(buf[0:4]))
		mask := binary.NativeEndian.Uint32(buf[4:8])
		size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[12:16]))
		if size > len(buf) {
			return false, errShapeWatch
		}
		buf = buf[size:]
		if mask&unix.IN_IGNORED != 0 && !s.wds[wd] {
			continue // a watch unwatch removed
		}
		if mask&unix.IN_IGNORED != 0 {
			delete(s.wds, wd) // its folder is gone (or unmounted)
		}
		changed = true
	}
	return changed, nil
}

// begin prepares a walk that watches every folder before listing it; nil
// when there is no cover. Called with r.shape.mu held.
func (s *ShapeWatch) begin(commonDir string) *ShapeWatch {
	if s == nil || s.fd < 0 {
		return nil
	}
	var st unix.Stat_t
	if !localFileSystem(commonDir) || unix.Lstat(commonDir, &st) != nil {
		s.closeLocked()
		return nil
	}
	s.seen, s.topDev, s.failed = map[int32]bool{}, uint64(st.Dev), false
	return s
}

// watch adds the folder at abs (of device dev) to the watch before the walk
// lists it. A folder gone or swapped since its lstat needs no watch: its
// parent, watched before it was listed, has queued that change. Any other
// failure ends the cover once the walk is over.
func (s *ShapeWatch) watch(abs string, dev uint64) {
	if s.failed {
		return
	}
	if dev != s.topDev {
		s.failed = true // a mount inside the git folder
		return
	}
	wd, err := unix.InotifyAddWatch(s.fd, abs, shapeEvents|unix.IN_DONT_FOLLOW|unix.IN_ONLYDIR)
	switch {
	case err == unix.ENOENT || err == unix.ENOTDIR || err == unix.ELOOP:
		return
	case err != nil:
		s.failed = true
		return
	}
	s.seen[int32(wd)] = true
	s.wds[int32(wd)] = true
	if len(s.wds) > s.limit {
		s.failed = true
	}
}

// end closes the walk: a walk that watched every folder it listed makes
// the cover fresh; one that could not ends it. complete says the walk
// listed the whole folder (no refusal stopped it), so the watches it did
// not meet are of folders no longer in it, and are dropped.
func (s *ShapeWatch) end(complete bool) {
	if s == nil {
		return
	}
	if s.failed {
		s.closeLocked()
		return
	}
	if complete {
		for wd := range s.wds {
			if !s.seen[wd] {
				_, _ = unix.InotifyRmWatch(s.fd, uint32(wd))
				delete(s.wds, wd)
			}
		}
	}
	s.seen, s.walked = nil, true
}

// localFileSystem reports a folder on a file system listed in
// localFileSystems.
func localFileSystem(dir string) bool {
	var fs unix.Statfs_t
	if err := unix.Statfs(filepath.Clean(dir), &fs); err != nil {
		return false
	}
	_, ok := localFileSystems[int64(fs.Type)]
	return ok
}
