package secretfiles

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
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
func BenchmarkMatchCompiled(b *testing.B) { benchMillion(b, Default()) }

// BenchmarkMatchUndecorated is the baseline of the decorations: the same
// table and paths judged as before the grammar (the rules, and the name
// without trailing '~', spaces or dots).
func BenchmarkMatchUndecorated(b *testing.B) {
	m, err := Compile(Table)
	if err != nil {
		b.Fatal(err)
	}
	m.decorationsOffForTest = true
	benchMillion(b, m)
}

// BenchmarkMatchGrammarCost times the million paths with and without the
// decorations in turn, 20,000 paths at a time, so that both see the same
// load on this shared machine: ratio is the median, over the chunks, of the
// time with the decorations over the time without.
func BenchmarkMatchGrammarCost(b *testing.B) {
	paths := benchPaths()
	undecorated, err := Compile(Table)
	if err != nil {
		b.Fatal(err)
	}
	undecorated.decorationsOffForTest = true
	matchers := [2]*Matcher{Default(), undecorated}
	var spent [2]time.Duration
	var ratios []float64
	b.ResetTimer()
	for b.Loop() {
		for from := 0; from < len(paths); from += 20_000 {
			chunk := paths[from:min(from+20_000, len(paths))]
			var took [2]time.Duration
			for j := range 2 {
				i := (j + from/20_000) % 2 // each goes first in turn
				start := time.Now()
				for _, p := range chunk {
					matchers[i].Match(p)
				}
				took[i] = time.Since(start)
			}
			spent[0], spent[1] = spent[0]+took[0], spent[1]+took[1]
			ratios = append(ratios, float64(took[0])/float64(took[1]))
		}
	}
	slices.Sort(ratios)
	n := float64(len(paths) * b.N)
	b.ReportMetric(float64(spent[0].Nanoseconds())/n, "grammar-ns/path")
	b.ReportMetric(float64(spent[1].Nanoseconds())/n, "rules-ns/path")
	b.ReportMetric(ratios[len(ratios)/2], "ratio")
}

func benchMillion(b *testing.B, m *Matcher) {
	paths := benchPaths()
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
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(paths)*b.N), "ns/path")
	b.ReportMetric(float64(secret), "secret")
}

// BenchmarkMatchDecorated is the slow path: names a tool made from another
// one, each read back to the name it was made from and judged, against the
// same names judged as before the grammar.
func BenchmarkMatchDecorated(b *testing.B) {
	paths := []string{"src/.env.bak", "app/#.env#", "x/key - Copy.pem", ".kube/config.bak", "lib/index (1).ts",
		"docs/README.md~", "a/.ssh.bak/config", "b/config.old", "c/.env (Ann's conflicted copy 2024-01-02)",
		"d/%home%ann%.aws%credentials.swp", "e/id_rsa.pub~", "f/report copy 2.pdf"}
	undecorated, err := Compile(Table)
	if err != nil {
		b.Fatal(err)
	}
	undecorated.decorationsOffForTest = true
	for _, c := range []struct {
		name string
		m    *Matcher
	}{{"grammar", Default()}, {"undecorated", undecorated}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, p := range paths {
					c.m.Match(p)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(paths)*b.N), "ns/path")
		})
	}
}

// BenchmarkMatchHostile times the paths built to make the reading long
// (hostilePaths in decorations_test.go), each stopped by maxSteps, and the
// costliest of them alone: the figure is what a hostile name costs at most.
func BenchmarkMatchHostile(b *testing.B) {
	m := Default()
	for _, c := range []struct {
		name  string
		paths []string
	}{{"all", hostilePaths}, {"costliest", []string{costlyPath}}} {
		b.Run(c.name, func(b *testing.B) {
			steps := 0
			for _, p := range c.paths {
				_, _, n := m.match(p)
				steps += n
			}
			for b.Loop() {
				for _, p := range c.paths {
					m.Match(p)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(c.paths)*b.N), "ns/path")
			b.ReportMetric(float64(steps)/float64(len(c.paths)), "steps/path")
		})
	}
}

// BenchmarkMatchNaive is the baseline: each rule's pattern through doublestar
// one at a time, with the same decoration grammar over it. Before timing, it
// checks that the compiled matcher gives the same rule for every one of the
// million paths.
func BenchmarkMatchNaive(b *testing.B) {
	paths := benchPaths()
	if testing.Short() {
		paths = paths[:20_000]
	}
	m := Default()
	for _, p := range paths {
		want, wok := naiveDecorated(Table, p)
		got, gok := m.Match(p)
		if wok != gok || want.Pattern != got.Pattern {
			b.Fatalf("%q: compiled %v %q, naive %v %q", p, gok, got.Pattern, wok, want.Pattern)
		}
	}
	sample := paths[:100_000] // the naive loop is too slow for the whole million per run
	b.ResetTimer()
	for b.Loop() {
		for _, p := range sample {
			naiveDecorated(Table, p)
		}
	}
	b.ReportMetric(float64(len(sample))*float64(b.N)/b.Elapsed().Seconds(), "paths/s")
}

// agreeingPaths is how many realistic paths the unit run compares with the
// naive loop: 80 of them secret, and as many near misses, among folders of
// every depth; small enough for the race detector (the naive loop
// costs about 0.4 ms a path under -race). BenchmarkMatchNaive compares the
// whole million before it times anything (20,000 with -short, as make test's
// benchcheck runs it), and FuzzCompiledEqualsNaive searches beyond any list.
const agreeingPaths = 5_000

func TestRealisticPathsAgree(t *testing.T) {
	t.Parallel()
	m := Default()
	secret := 0
	for _, p := range realisticPaths(agreeingPaths) {
		want, wok := naiveDecorated(Table, p)
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
	t.Logf("%d of %d paths secret", secret, agreeingPaths)
}
