package regress

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/gate"
)

// TestCorpus runs every case against the git on PATH, as
// `gatehouse regress` does.
func TestCorpus(t *testing.T) {
	version, git, err := gate.Version(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Corpus() {
		t.Run(c.Name, func(t *testing.T) {
			r := RunCase(context.Background(), c, git, version, t.TempDir())
			switch r.Status {
			case "skip":
				t.Skip(r.Reason)
			case "FAIL":
				t.Fatal(r.Reason)
			}
		})
	}
}

func TestCorpusIsLargeAndNamedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Corpus() {
		if seen[c.Name] || c.Attack == "" || c.Method == "" || c.Build == nil {
			t.Errorf("case %q: duplicate or incomplete", c.Name)
		}
		seen[c.Name] = true
	}
	if len(seen) < 40 {
		t.Fatalf("%d cases; the corpus must keep at least 40", len(seen))
	}
}

func TestVersionRanges(t *testing.T) {
	for _, c := range []struct {
		v, since, before string
		ok               bool
	}{
		{"2.39.5", "", "", true}, {"2.39.5", "2.41", "", false}, {"2.41.0", "2.41", "", true},
		{"2.45.1", "2.41", "2.45", false}, {"2.44.9", "2.41", "2.45", true},
	} {
		if applies(c.v, c.since, c.before) != c.ok {
			t.Errorf("applies(%s, %s, %s) != %v", c.v, c.since, c.before, c.ok)
		}
	}
}

// The runner fails a case that lost its teeth, and a case whose exploit
// gets through: a corpus that cannot fail proves nothing.
func TestTheRunnerCanFail(t *testing.T) {
	version, git, err := gate.Version(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	toothless := Case{Name: "toothless", Attack: "nothing", Build: func(e *Env) { e.Init(nil) },
		Plain: func(e *Env) string { return "" }, Method: "git.status", Params: target}
	if r := RunCase(context.Background(), toothless, git, version, t.TempDir()); r.Status != "FAIL" || !strings.Contains(r.Reason, "not-reproduced") {
		t.Fatalf("a case that never fires: %+v", r)
	}
	leaky := Case{Name: "leaky", Attack: "always fires", Build: func(e *Env) { e.Init(nil) },
		Fired: func(e *Env, out string) bool { return true }, Method: "git.status", Params: target}
	if r := RunCase(context.Background(), leaky, git, version, t.TempDir()); r.Status != "FAIL" || !strings.Contains(r.Reason, "fired through gatehouse") {
		t.Fatalf("a case that fires through gatehouse: %+v", r)
	}
	wrong := hookCases[0]
	wrong.Want = refused("a sentence gatehouse never says")
	if r := RunCase(context.Background(), wrong, git, version, t.TempDir()); r.Status != "FAIL" || !strings.Contains(r.Reason, "want REFUSED") {
		t.Fatalf("a case with the wrong answer: %+v", r)
	}
}
