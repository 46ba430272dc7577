package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The hint names this binary by the name the person can type: its path when
// "gatehouse" on PATH is another program (or none), the plain name when it
// is this one.
func TestSelfCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "my bin", "gatehouse")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no gatehouse on PATH
	if got, want := commandFor(bin), "'"+bin+"'"; got != want {
		t.Fatalf("with no gatehouse on PATH: %q, want the binary's path quoted, %q", got, want)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "gatehouse"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", other)
	if got := commandFor(bin); got == "gatehouse" {
		t.Fatalf("with another gatehouse on PATH: the plain name, which runs the other one")
	}
	t.Setenv("PATH", filepath.Dir(bin))
	if got := commandFor(bin); got != "gatehouse" {
		t.Fatalf("with this binary on PATH: %q, want the plain name", got)
	}
	for in, want := range map[string]string{"/usr/bin/gatehouse": "/usr/bin/gatehouse", "/home/a b/gatehouse": "'/home/a b/gatehouse'", "/x/it's": `'/x/it'\''s'`} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
