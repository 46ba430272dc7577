package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// bigWrite is the parameters of a files.write of a 120 kB source file: its
// tabs, quotes and newlines escaped, the JSON is over the 128 KiB a single
// argument may have on Linux.
func bigWrite(t *testing.T) (params []byte, text string) {
	text = strings.Repeat("\tkey:\t\"value\",\n", 120_000/15)
	params, err := json.Marshal(map[string]any{"path": "big.go", "text": text, "baseHash": ""})
	if err != nil {
		t.Fatal(err)
	}
	return params, text
}

// A files.write too large for the command line goes on standard input
// ("-") or in a file ("@FILE"). Before, the only form was the argument,
// which the kernel refuses ("argument list too long").
func TestDoParamsFromStdinOrFile(t *testing.T) {
	gittest.Home(t, "")
	params, text := bigWrite(t)

	// Without the rule: the same JSON as an argument never reaches gatehouse.
	err := exec.Command("true", string(params)).Run()
	if !errors.Is(err, syscall.E2BIG) {
		t.Fatalf("a %d-byte argument: %v, want E2BIG", len(params), err)
	}

	for _, form := range []string{"-", "@"} {
		dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
		arg, stdin := form, string(params)
		if form == "@" {
			file := filepath.Join(t.TempDir(), "write.json")
			if err := os.WriteFile(file, params, 0o600); err != nil {
				t.Fatal(err)
			}
			arg, stdin = "@"+file, ""
		}
		var out, errOut strings.Builder
		code := run(&env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: os.Getenv},
			[]string{"do", "--as", "desktop", "--project", dir, "files.write", arg})
		if code != exitOK {
			t.Fatalf("do files.write %s: exit %d: %s", form, code, errOut.String())
		}
		got, err := os.ReadFile(filepath.Join(dir, "big.go"))
		if err != nil || string(got) != text {
			t.Fatalf("do files.write %s: %d bytes written (%v), want %d", form, len(got), err, len(text))
		}
	}
}

// Standard input is read up to 8 MiB, then refused with a sentence that
// says the bound; nothing is run.
func TestParamsBounded(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	huge := `{"path":"x","baseHash":"","text":"` + strings.Repeat("a", maxParams) + `"}`
	code, _, errOut := runWithStdin(huge, "do", "--as", "desktop", "--project", dir, "files.write", "-")
	if code != exitUsage || !strings.Contains(errOut, "the parameters are over 8 MiB") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(dir, "x")); err == nil {
		t.Fatal("the write ran")
	}
	code, _, errOut = runWithStdin("", "do", "--project", dir, "git.status", "-")
	if code != exitUsage || !strings.Contains(errOut, "no parameters were read") {
		t.Fatalf("empty stdin: exit %d: %s", code, errOut)
	}
	code, _, errOut = runWithStdin("", "call", "--lan", "-", "git.status", "-")
	if code != exitUsage || !strings.Contains(errOut, "not both") {
		t.Fatalf("call --lan - with params -: exit %d: %s", code, errOut)
	}
}

func runWithStdin(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = run(&env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: os.Getenv}, args)
	return code, out.String(), errOut.String()
}
