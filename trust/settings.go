package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/internal/fileid"
)

// Settings are the host's settings. The switch is state: it lives in the
// state folder's settings.json and only `gatehouse access` sets it. The
// rest are the person's settings, which they edit by hand: they live in the
// config folder's settings.json (DefaultConfigDir). When the two folders
// are one (GATEHOUSE_HOME, macOS), one settings.json holds both, as before
// they were split.
type Settings struct {
	// FullAccess is the "Full access for remote devices" switch. Off by
	// default; set only by the person at the computer (gatehouse access).
	FullAccess bool `json:"fullAccess"`
	// GitMemoryLimitMiB bounds the memory of every git process a phone
	// with the switch off starts (gate.Options.MemoryLimitMiB): 0 means the
	// default (1 GiB); values below gate's minimum (256) read as it.
	GitMemoryLimitMiB int `json:"gitMemoryLimitMiB,omitempty"`
	// GitMemoryTotalMiB bounds the memory of all of them at once
	// (gate.NewMemoryBudget): 0 means half of this computer's memory.
	GitMemoryTotalMiB int `json:"gitMemoryTotalMiB,omitempty"`
	// ClonesDir is where projects.clone puts repositories a device asks
	// for; "" means DefaultClonesDir under the home folder.
	ClonesDir string `json:"clonesDir,omitempty"`
}

// configSettings is the config folder's settings.json: the person's
// settings and nothing else, so a "fullAccess" written there is never read.
type configSettings struct {
	GitMemoryLimitMiB int    `json:"gitMemoryLimitMiB,omitempty"`
	GitMemoryTotalMiB int    `json:"gitMemoryTotalMiB,omitempty"`
	ClonesDir         string `json:"clonesDir,omitempty"`
}

// names lists the settings c holds (not their defaults), by their names in
// settings.json.
func (c configSettings) names() []string {
	var out []string
	if c.GitMemoryLimitMiB != 0 {
		out = append(out, "gitMemoryLimitMiB")
	}
	if c.GitMemoryTotalMiB != 0 {
		out = append(out, "gitMemoryTotalMiB")
	}
	if c.ClonesDir != "" {
		out = append(out, "clonesDir")
	}
	return out
}

func (s Settings) config() configSettings {
	return configSettings{GitMemoryLimitMiB: s.GitMemoryLimitMiB, GitMemoryTotalMiB: s.GitMemoryTotalMiB, ClonesDir: s.ClonesDir}
}

func (c configSettings) with(fullAccess bool) Settings {
	return Settings{FullAccess: fullAccess, GitMemoryLimitMiB: c.GitMemoryLimitMiB, GitMemoryTotalMiB: c.GitMemoryTotalMiB, ClonesDir: c.ClonesDir}
}

// DefaultClonesDir is the clones folder under the home folder when
// settings.json names none: a folder of its own, so a clone asked for from
// a phone never lands among the checkouts the person made by hand (its
// names are claimed, -2, -3 …, never reused), and never in the state
// folder, whose files are keys.
const DefaultClonesDir = "gatehouse-clones"

// ClonesFolder is the clones folder these settings name, for home.
func (s Settings) ClonesFolder(home string) string {
	if s.ClonesDir != "" {
		return s.ClonesDir
	}
	return filepath.Join(home, DefaultClonesDir)
}

// Settings returns the current settings; a missing or corrupt file reads as
// the defaults (switch off). The person's settings come from the config
// folder's settings.json; while it is missing, from the state folder's, where
// they were kept before the split (MoveSettings moves them).
func (s *Store) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := load(s.path(settingsFile), &s.settings)
	if s.configDir == s.dir {
		return state
	}
	config := load(s.SettingsFile(), &s.config)
	if s.config.problem == nil && s.config.id == (fileid.ID{}) {
		return state // no config file yet: the settings from before the split
	}
	return config.with(state.FullAccess)
}

// FullAccess reports the switch as it is now. The host reads it once when it
// admits a request and carries the result in the request's Trust.
func (s *Store) FullAccess() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return load(s.path(settingsFile), &s.settings).FullAccess
}

// SetFullAccess turns the switch on or off.
func (s *Store) SetFullAccess(on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return update(s, settingsFile, &s.settings, func(cur Settings) (Settings, error) {
		cur.FullAccess = on
		return cur, nil
	})
}

// MoveSettings moves the person's settings that the state folder's
// settings.json still holds, from before the split, to the config folder's,
// once: it returns the names of those it moved, or none. Nothing is lost: the
// config file is written before the state file gives them up, and a config
// file that exists already is left as it is (it is what is read) and so are
// the state file's copies. In one folder it does nothing.
//
// Both folders must pass their check first (CheckFolder, CheckConfigFolder):
// a state folder another user put in place of the person's would otherwise
// have its clonesDir copied into the person's own config file, where it
// would outlast the swap.
func (s *Store) MoveSettings() (moved []string, err error) {
	if s.configDir == s.dir {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	state, err := readJSON[Settings](s.path(settingsFile))
	moved = state.config().names()
	if err != nil || len(moved) == 0 {
		return nil, nil // missing or corrupt: nothing to move, and it reads as defaults
	}
	if _, err := os.Lstat(s.SettingsFile()); !errors.Is(err, fs.ErrNotExist) {
		return nil, nil // the config file exists: it wins
	}
	if err := s.checkBoth(); err != nil {
		return nil, err
	}
	if err := writeJSON(s.SettingsFile(), state.config()); err != nil {
		return nil, err
	}
	if err := writeJSON(s.path(settingsFile), Settings{FullAccess: state.FullAccess}); err != nil {
		return nil, err
	}
	s.settings.loaded, s.config.loaded = false, false
	return moved, nil
}

// StaleSettings names the person's settings the state folder's settings.json
// still holds while the config folder's settings.json exists, so they are
// not read: doctor says so, since an edit made there has no effect.
func (s *Store) StaleSettings() []string {
	if s.configDir == s.dir {
		return nil
	}
	if _, err := os.Lstat(s.SettingsFile()); err != nil {
		return nil
	}
	state, err := readJSON[Settings](s.path(settingsFile))
	if err != nil {
		return nil
	}
	return state.config().names()
}

// checkBoth checks both folders' paths (a guarded Store's guard included).
func (s *Store) checkBoth() error {
	if err := s.Check(); err != nil {
		return err
	}
	if err := CheckFolder(s.dir); err != nil {
		return err
	}
	return CheckConfigFolder(s.configDir)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}
