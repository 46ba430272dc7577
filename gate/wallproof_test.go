//go:build linux

package gate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/trust"
)

// memoryProofs keeps a record in memory, as the state folder would.
type memoryProofs struct {
	record []byte
	writes int
}

func (m *memoryProofs) ReadWallProof() ([]byte, error) {
	if m.record == nil {
		return nil, os.ErrNotExist
	}
	return m.record, nil
}

func (m *memoryProofs) WriteWallProof(record []byte) error {
	m.record, m.writes = record, m.writes+1
	return nil
}

// countedTest stands for the self-test: it counts its runs and answers st.
func countedTest(runs *int, st state) func(string) state {
	return func(string) state { *runs++; return st }
}

var passed = state{abi: 7, ptrace: true}

// A passing answer is kept, and believed by the next process on this kernel,
// boot and binaries: the test runs once, not at every start.
func TestWallProofKeptAndBelieved(t *testing.T) {
	git, proofs, runs := gitPath(t), &memoryProofs{}, 0
	key, err := currentWallKey(git)
	if err != nil {
		t.Skipf("no key here: %v", err)
	}
	if key.ABI == 0 {
		t.Skip("no Landlock here: nothing is ever kept")
	}
	want := state{abi: key.ABI, ptrace: true}
	if got := keptWallState(git, proofs, countedTest(&runs, want)); got != want || runs != 1 || proofs.writes != 1 {
		t.Fatalf("first: state %+v, %d runs, %d writes", got, runs, proofs.writes)
	}
	if got := keptWallState(git, proofs, countedTest(&runs, state{broken: errors.New("must not run")})); got != want || runs != 1 {
		t.Fatalf("second: state %+v after %d runs; want the kept %+v without a run", got, runs, want)
	}
}

// Whatever the answer depends on, changed, makes the record no record: the
// test runs again. So do a corrupt record, one with fields gatehouse does
// not write, and one that claims no Landlock.
func TestWallProofOfAnotherKeyIsTestedAgain(t *testing.T) {
	git := gitPath(t)
	key, err := currentWallKey(git)
	if err != nil {
		t.Skipf("no key here: %v", err)
	}
	if key.ABI == 0 {
		t.Skip("no Landlock here: nothing is ever kept")
	}
	good, _ := json.Marshal(wallProof{Key: key, ABI: key.ABI, Ptrace: true})
	changed := map[string]func(*wallProof){
		"kernel":       func(p *wallProof) { p.Key.Kernel += " other" },
		"boot":         func(p *wallProof) { p.Key.BootID = "00000000-0000-0000-0000-000000000000" },
		"abi in key":   func(p *wallProof) { p.Key.ABI-- },
		"abi":          func(p *wallProof) { p.ABI-- },
		"ptrace scope": func(p *wallProof) { p.Key.PtraceScope = "3" },
		"gatehouse":    func(p *wallProof) { p.Key.Gatehouse += "x" },
		"git":          func(p *wallProof) { p.Key.Git = "/usr/local/bin/git" },
		"no landlock":  func(p *wallProof) { p.ABI, p.Key.ABI = 0, 0 },
	}
	records := map[string][]byte{
		"corrupt":       good[:len(good)/2],
		"unknown field": append(append([]byte{}, good[:len(good)-1]...), []byte(`,"broken":false}`)...),
		"empty":         []byte("{}"),
	}
	for name, change := range changed {
		var p wallProof
		if err := json.Unmarshal(good, &p); err != nil {
			t.Fatal(err)
		}
		change(&p)
		records[name], _ = json.Marshal(p)
	}
	for name, record := range records {
		runs := 0
		proofs := &memoryProofs{record: record}
		if got := keptWallState(git, proofs, countedTest(&runs, passed)); got != passed || runs != 1 {
			t.Errorf("%s: state %+v after %d runs; want the test run once", name, got, runs)
		}
	}
	runs := 0
	if keptWallState(git, &memoryProofs{record: good}, countedTest(&runs, passed)); runs != 0 {
		t.Errorf("the unchanged record was not believed")
	}
}

// A failing answer, and no Landlock, are never kept: every process asks the
// kernel again, so a broken wall is refused at every start and a fixed one
// is noticed.
func TestWallProofKeepsOnlyAPass(t *testing.T) {
	git := gitPath(t)
	for name, st := range map[string]state{
		"broken":      {abi: 7, broken: ErrWallBroken},
		"no landlock": {abi: 0, note: "missing"},
	} {
		proofs, runs := &memoryProofs{}, 0
		for range 2 {
			if got := keptWallState(git, proofs, countedTest(&runs, st)); got.broken != st.broken || got.abi != st.abi {
				t.Errorf("%s: state %+v, want %+v", name, got, st)
			}
		}
		if runs != 2 || proofs.writes != 0 {
			t.Errorf("%s: %d runs, %d writes; want the test at each start and nothing kept", name, runs, proofs.writes)
		}
	}
	runs := 0
	for range 2 {
		keptWallState(git, nil, countedTest(&runs, passed))
	}
	if runs != 2 {
		t.Errorf("without a place to keep it, the test ran %d times for 2 processes", runs)
	}
}

// With the state folder as the keeper and the real self-test: the second
// process runs no probe and finds what the first proved; a record another
// user could write, or a link in its place, is no record.
func TestWallProofInStateFolder(t *testing.T) {
	git := gitPath(t)
	if landlock() == 0 {
		t.Skip("no Landlock here: nothing is kept")
	}
	dir := t.TempDir()
	store, err := trust.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Guard(); err != nil {
		t.Fatal(err)
	}
	first := keptWallState(git, store, selfTest)
	if first.broken != nil {
		t.Fatalf("the self-test failed: %v", first.broken)
	}
	runs := 0
	if got := keptWallState(git, store, countedTest(&runs, state{})); runs != 0 || got != (state{abi: first.abi, ptrace: first.ptrace}) {
		t.Fatalf("second process: %+v after %d runs; want %+v kept", got, runs, first)
	}
	file := filepath.Join(dir, "wallproof.json")
	fi, err := os.Lstat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the record: %v, mode %v; want 0600", err, fi.Mode())
	}
	if err := os.Chmod(file, 0o622); err != nil {
		t.Fatal(err)
	}
	if keptWallState(git, store, countedTest(&runs, passed)); runs != 1 {
		t.Errorf("a record others can write was believed")
	}
	record, _ := os.ReadFile(file)
	elsewhere := filepath.Join(t.TempDir(), "proof")
	if err := os.WriteFile(elsewhere, record, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, file); err != nil {
		t.Fatal(err)
	}
	if keptWallState(git, store, countedTest(&runs, passed)); runs != 2 {
		t.Errorf("a record through a link was believed")
	}
}
