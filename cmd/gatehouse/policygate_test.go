package main

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/trust"
)

// gatehouse policy lists the flags of every git subcommand gatehouse
// runs. gate.PolicySubs names gate's rows one by one, so this reads
// gate's source for every package-level sub{name: ...} row and fails when
// one is missing from the list (a subcommand added without its flags in
// the policy), or listed twice.
func TestPolicyListsEverySubcommand(t *testing.T) {
	files, err := filepath.Glob("../../gate/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("gate's source: %v", err)
	}
	fset := token.NewFileSet()
	var declared []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					// gh's row (confine_linux.go subGH) describes gh to the
					// wall; its environment has a section of its own
					if name, ok := subName(v); ok && name != "gh" {
						declared = append(declared, name)
					}
				}
			}
		}
	}
	if len(declared) < 20 {
		t.Fatalf("found only %d sub rows in gate's source: %v", len(declared), declared)
	}
	var listed []string
	for _, s := range gate.PolicySubs() {
		if slices.Contains(listed, s.Name) {
			t.Errorf("gate.PolicySubs lists %q twice", s.Name)
		}
		listed = append(listed, s.Name)
	}
	for _, name := range declared {
		if !slices.Contains(listed, name) {
			t.Errorf("git %s is declared in gate but gate.PolicySubs (gate/policyview.go) leaves it out of gatehouse policy", name)
		}
	}
	for _, name := range listed {
		if !slices.Contains(declared, name) {
			t.Errorf("gate.PolicySubs lists git %s, which no row in gate declares", name)
		}
	}
}

// subName is the name of a sub{name: "..."} literal.
func subName(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "sub" {
		return "", false
	}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "name" {
			if s, ok := kv.Value.(*ast.BasicLit); ok {
				name, err := strconv.Unquote(s.Value)
				return name, err == nil
			}
		}
	}
	return "", false
}

// gatehouse policy's gh section reads the tables gh's environment is built
// from (gate/policyview.go); this starts gh through gate's own launcher, as
// a gh that prints its environment, with every listed variable set and
// some that no list names, and holds the printed names to the section:
// each kept one that was set, each forced one, and nothing else.
func TestPolicyGHEnvIsWhatGHGets(t *testing.T) {
	g := gate.PolicyGHEnv()
	gh := filepath.Join(t.TempDir(), "gh")
	if err := os.WriteFile(gh, []byte("#!/bin/sh\nexec /usr/bin/env\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, name := range g.Kept {
		if strings.Contains(name, "*") {
			continue
		}
		switch name {
		case "PATH", "HOME": // as they are
		case "TMPDIR": // gh starts in it
			t.Setenv(name, t.TempDir())
		default:
			t.Setenv(name, "kept")
		}
		if os.Getenv(name) != "" {
			want[name] = true
		}
	}
	t.Setenv("LC_CTYPE", "C.UTF-8") // LC_* is kept
	want["LC_CTYPE"] = true
	for _, kv := range g.Forced {
		name, _, _ := strings.Cut(kv, "=")
		want[name] = true
	}
	for _, name := range []string{"BASH_ENV", "EDITOR", "GH_DEBUG", "GIT_SSH_COMMAND", "LD_PRELOAD", "GIT_CONFIG_GLOBAL"} {
		t.Setenv(name, "unlisted")
	}
	out, err := gate.RunGH(context.Background(), gh, trust.Desktop(), gate.GHCall{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, _, _ := strings.Cut(line, "=")
		switch name {
		case "PWD", "OLDPWD", "SHLVL", "_": // the shell's own
			continue
		}
		got[name] = true
		if !want[name] {
			t.Errorf("gh got %s, which gatehouse policy does not list", name)
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("gatehouse policy lists %s for gh, which gh did not get", name)
		}
	}
}
