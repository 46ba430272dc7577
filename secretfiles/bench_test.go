package secretfiles

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// realisticPaths builds n paths shaped like a large monorepo: source trees of
// several languages, vendored dependencies, tests and fixtures, build output,
// dotfiles, and about one path in two hundred that is a secret or a near miss.
func realisticPaths(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	tops := []string{"src", "lib", "pkg", "internal", "cmd", "app", "web", "test", "tests",
		"node_modules", "vendor", "third_party", "docs", "scripts", "tools", "services", "packages"}
	mids := []string{"components", "utils", "api", "core", "models", "views", "handlers", "server",
		"client", "auth", "config", "db", "migrations", "fixtures", "testdata", "assets", "styles",
		"hooks", "store", "routes", "middleware", "lodash", "react", "dist", "build", "esm", "v2"}
	names := []string{"index", "main", "Button", "server", "client", "handler", "util", "types",
		"README", "LICENSE", "package", "config", "settings", "helpers", "app", "routes", "schema",
		"user_test", "auth", "session", "token", "crypto", "parser", "lexer", "Makefile"}
	exts := []string{".go", ".ts", ".tsx", ".js", ".py", ".rs", ".md", ".json", ".yaml", ".css",
		".html", ".java", ".c", ".h", ".txt", ".lock", ".svg", ".png", "", ".sh", ".toml"}
	odd := []string{".env", ".env.example", "id_rsa", "id_rsa.pub", "secrets.yaml", "secrets.go",
		".npmrc", "credentials.json", "server.pem", ".gitignore", ".editorconfig", "go.sum",
		".DS_Store", ".eslintrc.json", "Dockerfile", ".dockerignore", "auth.json", ".kube/config",
		".github/workflows/ci.yml", "terraform.tfstate", ".aws/credentials", "prod.env"}
	out := make([]string, n)
	for i := range out {
		depth := 1 + r.IntN(5)
		p := tops[r.IntN(len(tops))]
		for range depth - 1 {
			p += "/" + mids[r.IntN(len(mids))]
		}
		if r.IntN(200) == 0 {
			p += "/" + odd[r.IntN(len(odd))]
		} else {
			p += "/" + names[r.IntN(len(names))] + exts[r.IntN(len(exts))]
		}
		out[i] = p
	}
	return out
}

var benchPaths = sync.OnceValue(func() []string { return realisticPaths(1_000_000) })

// BenchmarkMatchCompiled classifies the million paths with the compiled
// table; paths/s is the figure the target is stated in.
func BenchmarkMatchCompiled(b *testing.B) {
	paths := benchPaths()
	m := Default()
	b.ResetTimer()
	secret := 0
	for b.Loop() {
		secret = 0
		for _, p := range paths {
			if _, ok := m.Match(p); ok {
				secret++
			}
		}
	}
	b.ReportMetric(float64(len(paths))*float64(b.N)/b.Elapsed().Seconds(), "paths/s")
	b.ReportMetric(float64(secret), "secret")
}

// BenchmarkMatchNaive is the baseline: each rule's pattern through doublestar
// one at a time. Before timing, it checks that the compiled matcher gives the
// same rule for every one of the million paths.
func BenchmarkMatchNaive(b *testing.B) {
	paths := benchPaths()
	if testing.Short() {
		paths = paths[:20_000]
	}
	m := Default()
	for _, p := range paths {
		want, wok := naiveMatch(Table, p)
		got, gok := m.Match(p)
		if wok != gok || want.Pattern != got.Pattern {
			b.Fatalf("%q: compiled %v %q, naive %v %q", p, gok, got.Pattern, wok, want.Pattern)
		}
	}
	sample := paths[:100_000] // the naive loop is too slow for the whole million per run
	b.ResetTimer()
	for b.Loop() {
		for _, p := range sample {
			naiveMatch(Table, p)
		}
	}
	b.ReportMetric(float64(len(sample))*float64(b.N)/b.Elapsed().Seconds(), "paths/s")
}

func TestRealisticPathsAgree(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	m := Default()
	secret := 0
	for _, p := range realisticPaths(n) {
		want, wok := naiveMatch(Table, p)
		got, gok := m.Match(p)
		if wok != gok || want.Pattern != got.Pattern {
			t.Fatalf("%q: compiled %v %q, naive %v %q", p, gok, got.Pattern, wok, want.Pattern)
		}
		if gok {
			secret++
		}
	}
	if secret == 0 {
		t.Fatal("the corpus has no secrets; the comparison proves little")
	}
	t.Logf("%d of %d paths secret", secret, n)
}
