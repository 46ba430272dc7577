package main

import (
	"os"
	"strings"
	"testing"
)

// docs/methods.md is generated from the registry: a method added, removed
// or changed (grant, lane, switch, once, parameters) without regenerating
// it fails here, as the policy golden file does.
func TestMethodsDoc(t *testing.T) {
	var b strings.Builder
	if err := writeMethodsDoc(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(methodsDocFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(methodsDocFile)
	if err != nil {
		t.Fatalf("%v; run go test ./cmd/gatehouse -run TestMethodsDoc -update", err)
	}
	if string(want) != b.String() {
		t.Errorf("docs/methods.md is out of date; run go test ./cmd/gatehouse -run TestMethodsDoc -update and review the diff")
	}
	for _, m := range []string{"## git.commit", "## files.write", "## host.hello"} {
		if !strings.Contains(b.String(), m) {
			t.Errorf("docs/methods.md has no %q", m)
		}
	}
}

func TestSplitParams(t *testing.T) {
	for decl, want := range map[string][3]string{
		"{target} -> {current, local, remote, truncated?}":                     {"{target}", "{current, local, remote, truncated?}", ""},
		"{target, query} -> {paths, truncated} (names, at least 2 characters)": {"{target, query}", "{paths, truncated}", "names, at least 2 characters"},
		"{ids} -> {icons: {id: dataURL|null}}; fixed candidates":               {"{ids}", "{icons: {id: dataURL|null}}", "fixed candidates"},
		"{}": {"{}", "", ""},
		"{calls: [{method, params}]} (read-only methods, at most maxBatch)": {"{calls: [{method, params}]}", "", "read-only methods, at most maxBatch"},
	} {
		p, r, n := splitParams(decl)
		if [3]string{p, r, n} != want {
			t.Errorf("%s: %q %q %q", decl, p, r, n)
		}
	}
}
