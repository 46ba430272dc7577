package invariants

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// refusalPkg is the one package that may define a device-facing sentence:
// every other package declares its refusals with refusal.New or
// refusal.Errorf, and reads them with refusal.Sentence. Four vocabularies
// had grown side by side (rpc.Error, relay.HostKeyError and duck-typed
// readers), each with its own idea of what a device may be told;
// TestSentenceCheckFiresOnAVocabulary shows the check finding one.
const refusalPkg = "internal/refusal"

// sentenceDecls names, in f, each method declared as Sentence() string and
// each interface that asks for one: both make a vocabulary of their own.
func sentenceDecls(f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Recv != nil && isSentence(n.Name.Name, n.Type) {
				out = append(out, "a method Sentence")
			}
		case *ast.InterfaceType:
			for _, m := range n.Methods.List {
				ft, ok := m.Type.(*ast.FuncType)
				if ok && len(m.Names) == 1 && isSentence(m.Names[0].Name, ft) {
					out = append(out, "an interface asking for Sentence")
				}
			}
		}
		return true
	})
	return out
}

// isSentence: named Sentence, no parameters, one string result.
func isSentence(name string, ft *ast.FuncType) bool {
	if name != "Sentence" || ft.Params.NumFields() != 0 || ft.Results.NumFields() != 1 {
		return false
	}
	id, ok := ft.Results.List[0].Type.(*ast.Ident)
	return ok && id.Name == "string"
}

func TestOnlyRefusalDefinesSentences(t *testing.T) {
	for pkg, files := range sourceFiles(t) {
		if pkg == refusalPkg {
			continue
		}
		for _, f := range files {
			for _, d := range sentenceDecls(f) {
				t.Errorf("%s declares %s: a device-facing sentence is a refusal (internal/refusal), not a type of its own", pkg, d)
			}
		}
	}
}

// The check finds what it bans: a fifth vocabulary written the way the
// four old ones were (rpc.Error, relay.HostKeyError, a duck-typed reader).
func TestSentenceCheckFiresOnAVocabulary(t *testing.T) {
	const src = `package p
type E struct{ s string }
func (e *E) Error() string    { return e.s }
func (e *E) Sentence() string { return e.s }
func read(err error) string {
	var se interface{ Sentence() string }
	_ = se
	return ""
}
func (e *E) Sentences() []string { return nil }
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if got := sentenceDecls(f); len(got) != 2 {
		t.Fatalf("found %v, want the method and the interface", got)
	}
}
