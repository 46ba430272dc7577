package invariants

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// visibilityAsks are the functions of gate that may ask fsguard whether a
// path is secret or hard-linked: "may this viewer see this path" is
// Repo.hidden's (gate/visible.go) alone, and it was once written out in six
// places (diff, the diff filter, stageHunks, stage, Show, Commit), which a
// change to the rule had to find.
var visibilityAsks = map[string]string{
	"hidden":      "the rule itself",
	"secretEntry": "the Secret flag of a status entry, which every viewer sees (not a decision)",
}

// visibilityCalls lists the functions of f, outside visibilityAsks, that
// call Secret or HardLinked on a Repo's root (r.root.Secret(...)).
func visibilityCalls(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		if _, allowed := visibilityAsks[fn.Name.Name]; allowed {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Secret" && sel.Sel.Name != "HardLinked") {
				return true
			}
			if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "root" {
				out = append(out, fn.Name.Name+" calls root."+sel.Sel.Name)
			}
			return true
		})
	}
	return out
}

// Every decision of gate on whether a viewer may see a path goes through
// Repo.hidden: no other function asks fsguard itself.
func TestGateAsksTheVisibilityRuleInOnePlace(t *testing.T) {
	files := sourceFiles(t)["gate"]
	if len(files) < 10 {
		t.Fatal("no gate sources found")
	}
	found := map[string]bool{}
	for _, f := range files {
		for _, c := range visibilityCalls(f) {
			t.Errorf("gate: %s: ask Repo.hidden (gate/visible.go), which holds the rule, or add the function to visibilityAsks with why", c)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				found[fn.Name.Name] = true
			}
		}
	}
	for name := range visibilityAsks {
		if !found[name] {
			t.Errorf("visibilityAsks names %s, which gate no longer has", name)
		}
	}
}

func TestVisibilityCheckFiresOnACopy(t *testing.T) {
	const src = `package gate
func (r *Repo) Blame(p string) error {
	if _, secret := r.root.Secret(p); secret {
		return ErrSecret
	}
	if r.root.HardLinked(p) {
		return ErrHardLinked
	}
	return nil
}
`
	f, err := parser.ParseFile(token.NewFileSet(), "blame.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if got := visibilityCalls(f); !slices.Equal(got, []string{"Blame calls root.Secret", "Blame calls root.HardLinked"}) {
		t.Fatalf("found %v, want both calls", got)
	}
}
