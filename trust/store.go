package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/internal/fileid"
	"golang.org/x/sys/unix"
)

// The files of the state folder, each 0600 and written atomically.
const (
	settingsFile = "settings.json" // the switch (and, in one folder, the person's settings: settings.go)
	grantsFile   = "grants.json"   // devices' grants with their key fingerprints
	targetsFile  = "targets.json"  // served checkouts and worktrees gatehouse made
	lanFile      = "lan.json"      // the LAN address's port and its paired devices' keys
	lockFile     = ".lock"         // serializes read-modify-write across processes
	serveLock    = "serve.lock"    // held by the serve that has the LAN address, while it runs
)

// maxStateFile bounds every state file read: a larger file is treated as
// corrupt (empty) rather than read into memory.
const maxStateFile = 4 << 20

// DefaultDir is where the state folder lives: $GATEHOUSE_HOME, else
// $XDG_STATE_HOME/gatehouse, else ~/.local/state/gatehouse (on macOS
// ~/Library/Application Support/gatehouse).
func DefaultDir() (string, error) {
	if v := os.Getenv("GATEHOUSE_HOME"); v != "" {
		return filepath.Abs(v)
	}
	if v := os.Getenv("XDG_STATE_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "gatehouse"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("state folder: %w (set GATEHOUSE_HOME)", err)
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "gatehouse"), nil
	}
	return filepath.Join(home, ".local", "state", "gatehouse"), nil
}

// DefaultConfigDir is where the config folder lives, which holds the
// settings the person edits (settings.go): $GATEHOUSE_CONFIG (which the
// service gatehouse installs sets beside GATEHOUSE_HOME, so it reads the
// settings the person's own commands read), else $XDG_CONFIG_HOME/gatehouse,
// else ~/.config/gatehouse. When GATEHOUSE_HOME is set without
// GATEHOUSE_CONFIG, and on macOS, it is the state folder (DefaultDir): one
// folder, as before the two were split.
func DefaultConfigDir() (string, error) {
	if v := os.Getenv("GATEHOUSE_CONFIG"); v != "" {
		return filepath.Abs(v)
	}
	if os.Getenv("GATEHOUSE_HOME") != "" || runtime.GOOS == "darwin" {
		return DefaultDir()
	}
	if v := os.Getenv("XDG_CONFIG_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "gatehouse"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config folder: %w (set GATEHOUSE_HOME)", err)
	}
	return filepath.Join(home, ".config", "gatehouse"), nil
}

// Store is the state folder. Reads are cached by each file's identity
// (device, inode, size, mtime, ctime), so a running serve sees a change made
// by `gatehouse access` or `gatehouse devices` at its next call, for the cost
// of one lstat. A missing, unreadable or corrupt file reads as empty: no
// grants, switch off, no targets.
//
// A Store is safe for concurrent use, and several processes may share one
// folder: every change takes an advisory lock on the folder's lock file,
// re-reads the file, and writes it atomically.
//
// A long-running user of the folder (serve) calls Guard, after which every
// read and write first checks that no other user can have swapped the
// folder (see CheckFolder).
type Store struct {
	dir       string
	configDir string                // the config folder: dir itself when they are one
	guard     atomic.Pointer[guard] // nil until Guard

	mu       sync.Mutex
	settings cached[Settings]
	config   cached[configSettings] // the config folder's settings.json, when it is another folder
	grants   cached[map[string]DeviceGrant]
	targets  cached[[]Target]
	lan      cached[LANState]
}

// OpenStore opens (creating it if needed) the state folder dir, mode 0700,
// as the one folder for state and settings alike. A folder owned by
// another user is refused; a folder readable by others is narrowed to 0700.
func OpenStore(dir string) (*Store, error) {
	return OpenStoreWithConfig(dir, dir)
}

// OpenStoreWithConfig opens the state folder dir as OpenStore does, with
// the settings the person edits in configDir (DefaultConfigDir), which is
// made and checked the same way. The same path for both is one folder.
func OpenStoreWithConfig(dir, configDir string) (*Store, error) {
	if err := openFolder(stateFolder, dir); err != nil {
		return nil, err
	}
	if filepath.Clean(configDir) == filepath.Clean(dir) {
		configDir = dir
	} else if err := openFolder(configFolder, configDir); err != nil {
		return nil, err
	}
	return &Store{dir: dir, configDir: configDir}, nil
}

// openFolder makes the state or config folder (folder) dir if needed, mode
// 0700, refuses it if it belongs to another user, and narrows it to 0700.
func openFolder(folder, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", folder, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return fmt.Errorf("%s: %w", folder, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%s %s is not a folder", folder, dir)
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s %s belongs to another user", folder, dir)
	}
	if st.Mode&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s: %w", folder, err)
		}
	}
	return nil
}

// Dir is the state folder's path (local only; never sent to a device).
func (s *Store) Dir() string { return s.dir }

// ConfigDir is the config folder's path: Dir when they are one folder.
func (s *Store) ConfigDir() string { return s.configDir }

// SettingsFile is the path of the settings.json the person edits: in the
// config folder (local only; never sent to a device).
func (s *Store) SettingsFile() string { return filepath.Join(s.configDir, settingsFile) }

// Guard checks that only root and the current user can change what the
// folder's path names (CheckFolder), and the config folder's too when it
// is another (CheckConfigFolder), and keeps s to the folders they name
// now: from then on every read and write of s checks again first. A failed
// check is final: every later read gives the empty state (switch off, no
// grants, no targets, no LAN devices), every write fails with the check's
// error, and Check reports it. A check costs one lstat per component of
// the path.
func (s *Store) Guard() error {
	folders := [][2]string{{stateFolder, s.dir}}
	if s.configDir != s.dir {
		folders = append(folders, [2]string{configFolder, s.configDir})
	}
	g, err := newGuard(folders...)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.guard.Store(g)
	s.settings.guard, s.config.guard, s.grants.guard, s.targets.guard, s.lan.guard = g, g, g, g, g
	return nil
}

// Check checks a guarded folder again (Guard) and returns why it may no
// longer be used, or nil. A Store that is not guarded checks nothing.
func (s *Store) Check() error {
	g := s.guard.Load()
	if g == nil {
		return nil
	}
	return g.check()
}

func (s *Store) path(name string) string { return filepath.Join(s.dir, name) }

// cached holds the last parsed version of one state file and its identity.
type cached[T any] struct {
	id      fileid.ID
	loaded  bool
	value   T
	problem error  // why the file read as empty, for doctor
	guard   *guard // the Store's, once guarded: checked before every read
}

// load returns the file's value, re-reading it only when its identity
// changed. Any failure reads as the zero value and is kept as c.problem.
// In a guarded Store whose folder fails its check, the read is refused: it
// gives the zero value and leaves the cache and c.problem alone (a problem
// would have SaveLAN move lan.json aside in the folder that replaced it).
func load[T any](path string, c *cached[T]) T {
	if c.guard != nil && c.guard.check() != nil {
		var zero T
		return zero
	}
	id, err := fileid.Lstat(path)
	if err == nil && c.loaded && id == c.id {
		return c.value
	}
	var zero T
	c.loaded, c.id, c.value, c.problem = true, id, zero, nil
	if err != nil {
		c.problem = err
		return zero
	}
	if id == (fileid.ID{}) {
		return zero // missing: empty, and not a problem
	}
	v, err := readJSON[T](path)
	if err != nil {
		c.problem = err
		return zero
	}
	c.value = v
	return v
}

func readJSON[T any](path string) (T, error) {
	var v T
	data, err := readOwned(path, maxStateFile)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(data, &v); err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return v, nil
}

// update runs change on a fresh read of the file under the folder's lock and
// writes the result atomically. A corrupt file starts over from empty.
func update[T any](s *Store, name string, c *cached[T], change func(T) (T, error)) error {
	if err := s.Check(); err != nil {
		return err // a write to a folder another user put in its place would hand them the keys
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	// A missing, unreadable or corrupt file starts over from empty, as it
	// reads for everyone else.
	cur, _ := readJSON[T](s.path(name))
	next, err := change(cur)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := atomicfile.Write(s.path(name), append(data, '\n'), 0o600); err != nil {
		return err
	}
	c.loaded = false // the next read picks up the new identity
	return nil
}

// lock takes the folder's advisory lock (flock on .lock), shared by every
// gatehouse process using this folder.
func (s *Store) lock() (func(), error) {
	fd, err := unix.Open(s.path(lockFile), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state folder lock: %w", err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("state folder lock: %w", err)
	}
	return func() {
		_ = unix.Flock(fd, unix.LOCK_UN)
		_ = unix.Close(fd)
	}, nil
}

// ErrServeLocked: another serve holds the folder's serve lock (LockServe).
var ErrServeLocked = errors.New("another gatehouse serve holds this state folder")

// LockServe takes the folder's serve lock (flock on serve.lock) without
// waiting, for the serve that has the LAN address: two serves on one folder
// would both take the kept port and write lan.json. It returns
// ErrServeLocked when another process holds it. The lock lasts until
// release, or until the process ends, however it ends.
func (s *Store) LockServe() (release func(), err error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	fd, err := unix.Open(s.path(serveLock), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state folder serve lock: %w", err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		_ = unix.Close(fd)
		if err == unix.EWOULDBLOCK {
			return nil, ErrServeLocked
		}
		return nil, fmt.Errorf("state folder serve lock: %w", err)
	}
	var once sync.Once
	return func() { once.Do(func() { _ = unix.Close(fd) }) }, nil
}

// Problems lists state files that exist but could not be read, and so are
// treated as empty. Doctor shows them; nothing else needs to.
func (s *Store) Problems() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	load(s.path(settingsFile), &s.settings)
	load(s.path(grantsFile), &s.grants)
	load(s.path(targetsFile), &s.targets)
	load(s.path(lanFile), &s.lan)
	problems := []error{s.settings.problem, s.grants.problem, s.targets.problem, s.lan.problem}
	if s.configDir != s.dir {
		load(s.SettingsFile(), &s.config)
		if s.config.problem != nil {
			problems = append(problems, fmt.Errorf("config folder's %w", s.config.problem))
		}
	}
	var out []error
	for _, p := range problems {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// ErrFileOpen: a state or settings file another user may change.
var ErrFileOpen = errors.New("another user may change it")

// skipOwnerCheckForTest reads a state file whatever its owner and mode, to
// show what the check stops.
var skipOwnerCheckForTest bool

// readOwned reads a state or settings file: a regular file (not a symlink,
// a FIFO or a device), at most limit bytes, that belongs to this user (or
// root) and that no other user may write. The folders' checks keep another
// user from replacing the file; this keeps them from changing it in place:
// a settings.json left 0666, or owned by another user, set serve's memory
// bound and the clones folder, and a state settings.json of another's turned
// Full access on, with doctor saying nothing. Such a file reads as empty,
// and Problems (doctor) says why and what to run.
func readOwned(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("read %s: %w", filepath.Base(path), atomicfile.ErrNotRegular)
		}
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), atomicfile.ErrNotRegular)
	}
	if !skipOwnerCheckForTest {
		if p := ownerProblem(&st, os.Geteuid()); p != "" {
			return nil, fmt.Errorf("%w: %s %s; if that is right, 'chown $(id -u) %s' makes it yours", ErrFileOpen, path, p, path)
		}
		if st.Mode&0o022 != 0 {
			return nil, fmt.Errorf("%w: %s can be written by other users (mode %04o); 'chmod 600 %s' fixes it", ErrFileOpen, path, st.Mode&0o7777, path)
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), atomicfile.ErrTooLarge)
	}
	return data, nil
}
