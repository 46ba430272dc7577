package methodsdoc

import (
	"os"
	"strings"
	"testing"
)

// docs is the committed reference, from this package's folder (go test
// runs in it).
const docs = "../../docs/methods.md"

// docs/methods.md is generated from the registry: a method added, removed
// or changed (grant, lane, switch, once, parameters) without regenerating
// it fails here.
func TestMethodsDoc(t *testing.T) {
	var b strings.Builder
	if err := Write(&b); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(docs)
	if err != nil {
		t.Fatalf("%v; run go generate ./rpc/methodsdoc", err)
	}
	if string(want) != b.String() {
		t.Errorf("docs/methods.md is out of date: run go generate ./rpc/methodsdoc (or go generate ./...) and review the diff")
	}
	for _, m := range []string{"## git.commit", "## files.write", "## host.hello"} {
		if !strings.Contains(b.String(), m) {
			t.Errorf("docs/methods.md has no %q", m)
		}
	}
}
