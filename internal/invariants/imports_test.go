package invariants

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gatehouse/gatehouse/"

// layers is the import direction, bottom first: a package imports only
// from layers below its own, or from its own entry's tree (rpc/methods
// imports rpc). cmd → rpc → github → gate, relay → {gate, fsguard} →
// {secretfiles, trust}, nothing back. Longest prefix wins; a package no entry names fails the
// test, so a new package is placed on purpose.
var layers = []struct {
	prefix string
	layer  int
	why    string
	never  []string // entries it must not import even though they sit lower
}{
	{"internal", 0, "helpers that belong to no rule import no rule", nil},
	{"web", 0, "the page's files, embedded", nil},
	{"trust", 1, "who is calling: decides nothing about git or files", nil},
	{"secretfiles", 1, "the secret-path rules: open no file, run no git", nil},
	{"fsguard", 2, "files in a checkout: never runs git, so never imports gate", nil},
	{"gate", 3, "git: knows nothing of the protocol or the transports", nil},
	{"audit", 4, "a report built from gate's and fsguard's findings", nil},
	{"github", 4, "GitHub's model over gate: gh starts only through gate's launcher", nil},
	{"relay", 5, "the relay sees only ids and ciphertext: no rpc, no engine", []string{"gate", "fsguard", "secretfiles", "audit"}},
	{"rpc", 5, "the protocol and its handlers, over the engine", nil},
	{"relay/link", 6, "the host's side of the relay: rpc carried over relay frames", nil},
	{"regress", 6, "the exploit corpus, run through rpc and the gate", nil},
	{"cmd", 7, "wiring", nil},
	{"bench", 7, "measurements", nil},
}

// layerOf returns the entry for a package of the module.
func layerOf(pkg string) (prefix string, layer int, never []string, ok bool) {
	rel := strings.TrimPrefix(pkg, module)
	best := -1
	for i, l := range layers {
		if (rel == l.prefix || strings.HasPrefix(rel, l.prefix+"/")) && (best < 0 || len(l.prefix) > len(layers[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return "", 0, nil, false
	}
	return layers[best].prefix, layers[best].layer, layers[best].never, true
}

func whyOf(prefix string) string {
	for _, l := range layers {
		if l.prefix == prefix {
			return l.why
		}
	}
	return ""
}

// wrongWay lists the imports of graph (package → its imports) that go
// against layers.
func wrongWay(graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		from, fromLayer, never, ok := layerOf(pkg)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: in no layer (add it to layers)", pkg))
			continue
		}
		for _, imp := range imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			to, toLayer, _, ok := layerOf(imp)
			if ok && (to == from || toLayer < fromLayer) && !slices.Contains(never, to) {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s imports %s, against the direction (%s: %s)",
				strings.TrimPrefix(pkg, module), strings.TrimPrefix(imp, module), from, whyOf(from)))
		}
	}
	slices.Sort(bad)
	return bad
}

// goList runs go list -json over the module's packages (test imports not
// included: only what production code imports counts).
func goList(t *testing.T, args ...string) []struct {
	ImportPath string
	Imports    []string
	Deps       []string
} {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-e", "-json=ImportPath,Imports,Deps"}, args...)...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []struct {
		ImportPath string
		Imports    []string
		Deps       []string
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Deps       []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestImportDirection fails the build of a change that makes the engine
// depend on its outer layers (gate importing rpc, fsguard importing gate)
// or the bottom rules on anything above them.
func TestImportDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	graph := map[string][]string{}
	for _, p := range goList(t, "./...") {
		graph[p.ImportPath] = p.Imports
	}
	for _, want := range []string{"gate", "github", "fsguard", "trust", "secretfiles", "rpc", "relay", "cmd/gatehouse"} {
		if _, ok := graph[module+want]; !ok {
			t.Fatalf("go list did not list %s", want)
		}
	}
	for _, b := range wrongWay(graph) {
		t.Error(b)
	}
}

// TestImportDirectionCatchesABackEdge: the check itself refuses each edge
// the issue names as forbidden, so a passing TestImportDirection means
// something.
func TestImportDirectionCatchesABackEdge(t *testing.T) {
	for _, edge := range [][2]string{
		{"gate", "rpc"}, {"gate", "relay"}, {"fsguard", "gate"}, {"secretfiles", "fsguard"},
		{"trust", "gate"}, {"trust", "secretfiles"}, {"rpc", "cmd/gatehouse"}, {"relay", "rpc"}, {"relay", "gate"},
		{"internal/refusal", "trust"}, {"gate", "github"}, {"github", "rpc"}, {"github", "rpc/methods"}, {"fsguard", "github"},
	} {
		if bad := wrongWay(map[string][]string{module + edge[0]: {module + edge[1]}}); len(bad) != 1 {
			t.Errorf("%s → %s not caught: %v", edge[0], edge[1], bad)
		}
	}
	for _, edge := range [][2]string{{"rpc", "gate"}, {"gate", "fsguard"}, {"fsguard", "secretfiles"}, {"rpc/methods", "rpc"}, {"relay/link", "rpc"},
		{"github", "gate"}, {"rpc/methods", "github"}} {
		if bad := wrongWay(map[string][]string{module + edge[0]: {module + edge[1]}}); len(bad) != 0 {
			t.Errorf("%s → %s refused: %v", edge[0], edge[1], bad)
		}
	}
}

// TestBinaryHoldsNoTestCode: nothing the gatehouse binary is built from
// imports testing; a test hook lives in a _test.go file (fsguard's did not).
func TestBinaryHoldsNoTestCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	for _, p := range goList(t, "./cmd/gatehouse") {
		if slices.Contains(p.Deps, "testing") {
			for _, q := range goList(t, p.Deps...) {
				if strings.HasPrefix(q.ImportPath, module) && slices.Contains(q.Imports, "testing") {
					t.Errorf("%s imports testing", q.ImportPath)
				}
			}
		}
	}
}
