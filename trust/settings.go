package trust

import "path/filepath"

// Settings are the host's settings in settings.json.
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
// the defaults (switch off).
func (s *Store) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return load(s.path(settingsFile), &s.settings)
}

// FullAccess reports the switch as it is now. The host reads it once when it
// admits a request and carries the result in the request's Trust.
func (s *Store) FullAccess() bool { return s.Settings().FullAccess }

// SetFullAccess turns the switch on or off.
func (s *Store) SetFullAccess(on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return update(s, settingsFile, &s.settings, func(cur Settings) (Settings, error) {
		cur.FullAccess = on
		return cur, nil
	})
}
