package main

import (
	"os"
	"path/filepath"
	"testing"
)

// gatehouse do runs a method as serve would: with the settings file's
// memory bounds, not the default whatever the file says, and the state
// folder to keep the kernel wall's self-test answer in; and it makes no
// state folder that does not exist yet.
func TestDoTakesTheMemoryBoundsFromTheSettings(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "settings.json"), []byte(`{"gitMemoryLimitMiB":300,"gitMemoryTotalMiB":900}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := doGateOptions(state, state)
	if o.MemoryLimitMiB != 300 || o.Budget == nil || o.Budget.Total() != 900<<20 {
		t.Fatalf("do's gate options %+v (budget %v), want a 300 MiB bound and a 900 MiB budget from the settings", o, o.Budget)
	}
	if o.WallProofs == nil {
		t.Fatal("do keeps no kernel wall self-test answer: every do would prove the kernel again")
	}
	none := filepath.Join(dir, "none")
	if o := doGateOptions(none, none); o.MemoryLimitMiB != 0 || o.Budget != nil || o.WallProofs != nil {
		t.Fatalf("with no state folder do's options are %+v, want the defaults", o)
	}
	if _, err := os.Stat(none); err == nil {
		t.Fatal("do made a state folder that did not exist")
	}
}
