// Package invariants holds the tests that check, by reading the source,
// that each rule keeps its one owner: only gate starts processes (git, and
// gh, which runs git, through the same launcher), github reaches gh only
// through gate, and every gate operation takes a trust.Trust.
package invariants

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// moduleRoot is the repository's top folder.
func moduleRoot(t *testing.T) string {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s", dir)
	}
	return dir
}

// sourceFiles parses every non-test Go file of the module, by its folder
// relative to the root.
func sourceFiles(t *testing.T) map[string][]*ast.File {
	root := moduleRoot(t)
	out := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		out[filepath.ToSlash(rel)] = append(out[filepath.ToSlash(rel)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// processStarters are the calls that start a program.
var processStarters = map[string]bool{
	"exec.Command": true, "exec.CommandContext": true, "os.StartProcess": true,
	"syscall.Exec": true, "syscall.ForkExec": true, "syscall.StartProcess": true,
	"unix.Exec": true,
}

// mayStartProcesses names the packages allowed to start a program, and why.
var mayStartProcesses = map[string]string{
	"gate":             "the one launcher for git and gh (spawn)",
	"internal/gittest": "builds fixture repositories with plain git, for tests only",
	"regress":          "reproduces each exploit with plain git, to prove it fires",
	"bench/relay":      "starts itself as the relay under test, so the devices run in another process",
	"internal/service": "installs serve as the user's service with the system's own tools (systemctl, loginctl, launchctl)",
	// A test-only harness: it runs Debian's initdb and postgres on a temporary
	// folder of its own, never git and never on a repository's content.
	"internal/pgtest": "starts a throwaway PostgreSQL server for the relay store's tests",
}

func TestOnlyGateStartsProcesses(t *testing.T) {
	for pkg, files := range sourceFiles(t) {
		if _, ok := mayStartProcesses[pkg]; ok {
			continue
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				if name := callName(n); processStarters[name] {
					t.Errorf("%s calls %s: only gate starts git or any program that runs it", pkg, name)
				}
				return true
			})
		}
	}
}

// Inside gate, one function starts a request's process: spawn, through
// which run starts git and runGH starts gh (which runs git itself, so it
// starts under the closed gate's environment and walls), so what bounds a
// child is written once.
func TestGateStartsGitInOneFunction(t *testing.T) {
	var where []string
	for _, f := range sourceFiles(t)["gate"] {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				if processStarters[callName(n)] {
					where = append(where, fn.Name.Name)
				}
				return true
			})
		}
	}
	var others []string
	for _, w := range where {
		if w != "spawn" && wallSelfTest[w] == "" {
			others = append(others, w)
		}
	}
	if len(others) > 0 || !slices.Contains(where, "spawn") {
		t.Fatalf("gate starts processes in %v; only spawn may (git through run, gh through runGH; and the wall's self-test: %v)", where, wallSelfTest)
	}
	// and both of a request's programs go through it
	for _, caller := range []string{"run", "runGH"} {
		if !callsIn(sourceFiles(t)["gate"], caller, "spawn") {
			t.Errorf("gate's %s does not start its program through spawn", caller)
		}
	}
}

// callsIn reports whether function fn of files calls a method or function
// named callee.
func callsIn(files []*ast.File, fn, callee string) bool {
	found := false
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != fn || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					switch f := call.Fun.(type) {
					case *ast.SelectorExpr:
						found = found || f.Sel.Name == callee
					case *ast.Ident:
						found = found || f.Name == callee
					}
				}
				return true
			})
		}
	}
	return found
}

// wallSelfTest names the functions of gate's kernel-wall self-test that
// start git themselves: they run it on no repository's content (git init in
// a temporary folder gatehouse made, git --version), to prove the kernel
// enforces Landlock and that a traced start works, before any closed call.
var wallSelfTest = map[string]string{
	"probe":       "confined git init inside and beside a temporary folder",
	"ptraceWorks": "git --version started traced, to learn whether ptrace is allowed",
}

// noGit lists the exported Repo methods that run no git, and so need no
// trust.
var noGit = map[string]string{
	"Root":              "returns the served folder",
	"Linked":            "reports a field",
	"MainPath":          "computes a path",
	"OriginURL":         "reads the config file with go-git's parser, never git",
	"Close":             "releases a descriptor",
	"GitDir":            "returns a path for the watcher",
	"Watch":             "opens the list cache for the watcher; git runs only in the calls that read it, each with its trust",
	"Hold":              "takes the checkout lock",
	"Bare":              "reports a field",
	"HeadBranch":        "reads the HEAD file for display, never git",
	"WatchShape":        "opens the git folder's inotify cover for the watcher; the decisions that read it take their trust",
	"MonitoredStatuses": "counts statuses for tests and benchmarks",
	"KeptStatuses":      "counts statuses for tests and benchmarks",
}

func TestEveryGateOperationTakesATrust(t *testing.T) {
	var methods []string
	for _, f := range sourceFiles(t)["gate"] {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || recvName(fn) != "Repo" {
				continue
			}
			methods = append(methods, fn.Name.Name)
			if _, ok := noGit[fn.Name.Name]; ok {
				continue
			}
			if !takesTrust(fn) {
				t.Errorf("Repo.%s takes no trust.Trust", fn.Name.Name)
			}
		}
	}
	sort.Strings(methods)
	if len(methods) < 15 {
		t.Fatalf("found only %v: the scan is broken", methods)
	}
}

// The runner itself requires a trust, and every call of it passes one.
func TestTheRunnerTakesATrust(t *testing.T) {
	found := false
	for _, f := range sourceFiles(t)["gate"] {
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Name.Name == "run" && recvName(fn) == "Repo" {
				found = takesTrust(fn)
			}
		}
	}
	if !found {
		t.Fatal("Repo.run does not take a trust.Trust")
	}
}

func recvName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func takesTrust(fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Trust" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "trust" {
				return true
			}
		}
	}
	return false
}

func callName(n ast.Node) string {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return id.Name + "." + sel.Sel.Name
}

// fileCalls open, read, write or walk files by name.
var fileCalls = map[string]bool{
	"os.Open": true, "os.OpenFile": true, "os.ReadFile": true, "os.WriteFile": true, "os.Create": true,
	"os.Remove": true, "os.RemoveAll": true, "os.Rename": true, "os.Mkdir": true, "os.MkdirAll": true,
	"os.Symlink": true, "os.Link": true, "os.ReadDir": true, "os.Stat": true, "os.Lstat": true,
	"os.Readlink": true, "os.Chmod": true, "os.Truncate": true, "os.OpenRoot": true, "os.OpenInRoot": true,
	"filepath.Walk": true, "filepath.WalkDir": true, "filepath.EvalSymlinks": true, "fs.WalkDir": true,
}

// bannedImports give a package raw access to files or processes.
var bannedImports = []string{"os/exec", "syscall", "golang.org/x/sys/unix", "io/ioutil", "net"}

// The method handlers hold no policy: only fsguard opens a checkout's files
// and only gate starts git, so rpc/methods does neither itself.
func TestMethodsNeverTouchFilesOrProcesses(t *testing.T) {
	files := sourceFiles(t)["rpc/methods"]
	if len(files) < 5 {
		t.Fatalf("found %d files in rpc/methods: the scan is broken", len(files))
	}
	for _, f := range files {
		for _, imp := range f.Imports {
			for _, banned := range bannedImports {
				if strings.Trim(imp.Path.Value, `"`) == banned {
					t.Errorf("rpc/methods imports %s", banned)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if name := callName(n); fileCalls[name] || processStarters[name] {
				t.Errorf("rpc/methods calls %s: files go through fsguard, git through gate", name)
			}
			return true
		})
	}
}

// processImports are the imports that start a program: os/exec, and
// syscall (ForkExec, StartProcess, Exec). golang.org/x/sys/unix stays
// allowed for github, whose clone folders are held by descriptor, and its
// Exec is a processStarters call the scan finds anyway.
var processImports = []string{"os/exec", "syscall"}

// githubStarts lists where f imports what starts a program or calls a
// process starter.
func githubStarts(f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		if p := strings.Trim(imp.Path.Value, `"`); slices.Contains(processImports, p) {
			out = append(out, "imports "+p)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if name := callName(n); processStarters[name] {
			out = append(out, "calls "+name)
		}
		return true
	})
	return out
}

// Package github holds GitHub's meaning and starts no process: every gh
// goes through gate's launcher (gate.Repo.GH, gate.RunGH), inside the
// gate's decision, walls and bounds. A github that imported os/exec could
// start gh with none of them.
func TestGitHubStartsNoProcess(t *testing.T) {
	files := sourceFiles(t)["github"]
	if len(files) < 3 {
		t.Fatalf("found %d files in github: the scan is broken", len(files))
	}
	for _, f := range files {
		for _, w := range githubStarts(f) {
			t.Errorf("github %s: gh starts through gate (gate.Repo.GH, gate.RunGH), never from github itself", w)
		}
	}
}

// The check finds what it bans: gh started the way gate/gh.go starts it,
// written into a file of package github.
func TestGitHubCheckFiresOnAStart(t *testing.T) {
	const src = `package github
import (
	"os/exec"
	"syscall"
)
func run() {
	cmd := exec.Command("gh", "pr", "list")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	_ = cmd.Run()
}
`
	f, err := parser.ParseFile(token.NewFileSet(), "github.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := githubStarts(f)
	if !slices.Equal(got, []string{"imports os/exec", "imports syscall", "calls exec.Command"}) {
		t.Fatalf("found %v, want both imports and the call", got)
	}
}

// The relay forwards sealed bodies it cannot open: the relay package (the
// server and its client) imports nothing that seals, opens or dispatches.
// relay/link, which joins a device's own keys to the client, is the device
// side and may.
func TestRelayNeverSeesPlaintext(t *testing.T) {
	banned := map[string]string{
		"github.com/gatehouse/gatehouse/rpc":     "the request protocol: envelopes, keys, dispatch",
		"golang.org/x/crypto/chacha20poly1305":   "the AEAD that seals bodies",
		"crypto/ecdh":                            "key agreement",
		"github.com/gatehouse/gatehouse/gate":    "git",
		"github.com/gatehouse/gatehouse/fsguard": "checkout files",
	}
	files := sourceFiles(t)["relay"]
	if len(files) == 0 {
		t.Fatal("no relay sources found")
	}
	for _, f := range files {
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if why, bad := banned[path]; bad && !(path == "crypto/ecdh" && f.Name.Name == "relay" && isIdentityFile(f)) {
				t.Errorf("relay imports %s (%s)", path, why)
			}
		}
	}
}

// isIdentityFile: the device-side identity file makes and stores the
// device's own X25519 key (never uses it on a frame).
func isIdentityFile(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "ensureKey" {
			return true
		}
	}
	return false
}
