package secretfiles

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The copies a black-box attack planted beside secrets: a view phone read
// every one while the originals were refused.
var plantedCopies = []string{
	"#.env#", ".env copy", ".env (copy)", ".env - Copy", "key.pem.bak", "server.key.orig",
	".npmrc.bak", ".pgpass.old", ".kube/config.bak", "rootkey.csv", "gha-creds-ef801c3bb35b52e5.json",
}

// vendorRulesAdded are the rules the same change added for vendors' credential
// downloads; without them and without the grammar the matcher is the one the
// attack read the copies through.
var vendorRulesAdded = []string{"**/rootkey.csv", "**/gha-creds-*.json", "**/*.azureauth"}

// nearMisses are decorated names of files that are not secret: they were
// readable before and stay so.
var nearMisses = []string{".env.example copy", "notes.bak", "README.md~", ".env.sample (1)", "config.old",
	"id_rsa.pub.bak", "Copy of keyboard.txt", "#notes.md#", "%home%ann%.env.example.swp"}

// oldMatcher is the matcher as it was: the table without the vendor rules,
// and every path judged by the rules alone (and without trailing '~',
// spaces or dots).
func oldMatcher(t *testing.T) *Matcher {
	t.Helper()
	var rules []Rule
	for _, r := range Table {
		if !slices.Contains(vendorRulesAdded, r.Pattern) {
			rules = append(rules, r)
		}
	}
	if len(rules) != len(Table)-len(vendorRulesAdded) {
		t.Fatalf("the vendor rules are not all in Table")
	}
	m, err := Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	m.decorationsOffForTest = true
	return m
}

// TestPlantedCopiesWereReadableAndAreNot proves the attack twice: each
// planted copy is not secret to the old matcher (a view phone reads it), and
// is to the new one, whose reason names the decoration and the rule.
func TestPlantedCopiesWereReadableAndAreNot(t *testing.T) {
	old, m := oldMatcher(t), Default()
	for _, p := range plantedCopies {
		for _, q := range []string{p, "app/config/" + p, strings.ToUpper(p)} {
			if r, ok := old.Match(q); ok {
				t.Errorf("old matcher: %q is secret (%s); the test proves nothing", q, r.Pattern)
			}
			if _, ok := m.Match(q); !ok {
				t.Errorf("%q is readable below the full grant", q)
			}
		}
	}
	for p, want := range map[string]string{
		"#.env#":           "an Emacs auto-save file (#name#) of a secret file: .env, dotenv file",
		".env - Copy":      "a Windows Explorer copy (name - copy.ext) of a secret file: .env, dotenv file",
		".kube/config.bak": "a backup copy (name.bak) of a secret file: .kube/config, kubectl",
		"key.pem.bak":      "a backup copy (name.bak) of a secret file: key.pem, PEM private key",
		"server.key.orig":  "(name.orig) of a secret file: server.key, private key",
	} {
		r, _ := m.Match(p)
		if !strings.Contains(r.Reason, want) {
			t.Errorf("%q: reason %q, want it to say %q", p, r.Reason, want)
		}
	}
	if r, _ := m.Match(".kube/config.bak"); r.Pattern != "**/.kube/config" {
		t.Errorf(".kube/config.bak: rule %s, want the rule of .kube/config", r.Pattern)
	}
	for _, p := range nearMisses {
		for _, q := range []string{p, "app/config/" + p, strings.ToUpper(p)} {
			if r, ok := old.Match(q); ok {
				t.Errorf("old matcher: %q is secret (%s)", q, r.Pattern)
			}
			if r, ok := m.Match(q); ok {
				t.Errorf("%q (a copy of a file that is not secret) matched %s (%s)", q, r.Pattern, r.Reason)
			}
		}
	}
}

// secretBases and freeBases are names whose copies the grammar judges: the
// first secret by several kinds of rule (a name, an extension, a folder, a
// word), the second look-alikes the rules free by kind or never match.
var (
	secretBases = []string{".env", "key.pem", "server.key", ".npmrc", "id_rsa", ".kube/config", ".ssh/config",
		"credentials.json", "terraform.tfstate", "wg0.conf", ".aws/credentials", "AuthKey_ABC.p8", "secrets.yaml"}
	freeBases = []string{".env.example", "id_rsa.pub", "README.md", "environment.ts", "config", "keyboard.txt",
		"secrets.go", "docs/secrets.md", "cacert.pem", "package.json", "src/config.json", "kube/config.go"}
)

// example fills a form's holes around base, the way the tool would name a
// copy of it; ok is false when the form cannot name a copy of base.
func example(f *form, base string) (string, bool) {
	dir, name := "", base
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		dir, name = base[:i+1], base[i+1:]
	}
	stem, ext := name, ""
	if dot := strings.LastIndexByte(name, '.'); dot > 0 {
		stem, ext = name[:dot], name[dot:]
	}
	var b strings.Builder
	for _, t := range f.toks {
		switch t.kind {
		case tLit:
			b.WriteString(t.lit)
		case tName:
			b.WriteString(name)
		case tDotName:
			if !strings.HasPrefix(name, ".") {
				b.WriteString(".")
			}
			b.WriteString(name)
		case tStem:
			b.WriteString(stem)
		case tDigits:
			b.WriteString("2")
		case tAny:
			b.WriteString("x 1")
		case tWord:
			b.WriteString("20240102-123456-X7")
		case tTmp8:
			b.WriteString("a1b2c3_d")
		case tClass:
			b.WriteByte(firstIn(t.set))
		case tMkstemp:
			b.WriteString("Ab12Cd")
		case tBlanks:
			b.WriteString(" ")
		case tPctPath, tBangPath:
			sep := map[tokKind]string{tPctPath: "%", tBangPath: "!"}[t.kind]
			b.WriteString(sep + strings.ReplaceAll("home/ann/"+base, "/", sep))
			dir = ""
		}
	}
	if f.hasExt {
		b.WriteString(ext)
	}
	return dir + b.String(), true
}

func firstIn(set *[256]bool) byte {
	for c := range set {
		if set[c] {
			return byte(c)
		}
	}
	return 0
}

// TestEveryFormKeepsTheVerdict is the grammar's contract, form by form: a
// copy of a secret is secret with a reason that names the decoration, a copy
// of a look-alike is not.
func TestEveryFormKeepsTheVerdict(t *testing.T) {
	m, g := Default(), defaultGrammar()
	for i := range g.forms {
		f := &g.forms[i]
		what := Decorations[f.row].What
		for _, base := range secretBases {
			p, _ := example(f, base)
			r, ok := m.Match(p)
			if !ok {
				t.Errorf("%s (%s): %q, a copy of %s, is not secret", what, f.shape, p, base)
			} else if !strings.Contains(r.Reason, "of a secret file: ") {
				t.Errorf("%s (%s): %q: reason %q does not say which file it copies", what, f.shape, p, r.Reason)
			}
		}
		for _, base := range freeBases {
			p, _ := example(f, base)
			if r, ok := m.Match(p); ok {
				t.Errorf("%s (%s): %q, a copy of %s, is secret by %s (%s)", what, f.shape, p, base, r.Pattern, r.Reason)
			}
		}
	}
}

// TestReasonNamesTheDecoration checks that a copy's reason is the one of
// the form that made it, for one example of every row.
func TestReasonNamesTheDecoration(t *testing.T) {
	m, g := Default(), defaultGrammar()
	for i := range g.forms {
		f := &g.forms[i]
		p, _ := example(f, "server.key")
		r, _ := m.Match(p)
		d := Decorations[f.row]
		if !strings.HasPrefix(r.Reason, d.What) || !strings.Contains(r.Source, d.Source) {
			t.Errorf("%q (%s): reason %q, source %q; want %q first and its source", p, f.shape, r.Reason, r.Source, d.What)
		}
	}
}

// Copied folders: the rules' folders judged under their copies' names, and
// ordinary folders with the same decorations left alone.
func TestDecoratedFolders(t *testing.T) {
	m := Default()
	for _, p := range []string{".ssh.bak/config", ".ssh (copy)/id_rsa.pub", "Copy of .ssh/known_hosts",
		".aws - Copy/credentials", ".kube.old/config", "home/ann/.gnupg~/pubring.kbx", ".ssh.bak/config.bak",
		"backup/.aws (Ann's conflicted copy 2024-01-02)/credentials"} {
		if _, ok := m.Match(p); !ok {
			t.Errorf("%q is not secret", p)
		}
	}
	for _, p := range []string{"src.bak/config", "config.old/settings.json", "lib (copy)/index.ts", "kube.bak/config",
		"docs - Copy/README.md", ".github.bak/workflows/ci.yml", "ssh.bak/config"} {
		if r, ok := m.Match(p); ok {
			t.Errorf("%q matched %s (%s)", p, r.Pattern, r.Reason)
		}
	}
}

// Names that look decorated but are not copies of a secret, and the cases
// where a word or a number reads both ways.
func TestDecorationFalsePositives(t *testing.T) {
	m := Default()
	for _, p := range []string{
		"environment.ts", "config.bak", "app/config.bak", "keyboard.txt", "keyboard.txt.bak", "README.md~",
		"notes 2.txt", "index (1).ts", "README copy.md", "Button - Copy.tsx", "package.json.orig",
		".my.cnf.sample", ".netrc.sample", ".pgpass.sample", // a word, not mkstemp's letters
		"netrc.5", "man/man5/shadow.5", "man/man1/htpasswd.1", "shadow.5.gz", // man pages: no bare .N
		"id_rsa.pub~", "id_rsa.pub.bak", "keys/id_ed25519 copy.pub", "secrets.go~", "docs/secrets.md.bak", // copies of look-alikes
		".env.example~", ".env.example (copy)", ".env.sample.bak", "templates/secret.yaml.bak",
		"src/%20encoded%20name.txt", "x/100%.txt", "a!b.txt",
	} {
		if r, ok := m.Match(p); ok {
			t.Errorf("%q matched %s (%s)", p, r.Pattern, r.Reason)
		}
	}
	// mkstemp's letters as written: a digit or a capital makes a transfer.
	for _, p := range []string{".my.cnf.Ab12Cd", ".netrc.x9y8z7", ".netrc.ABCDEF"} {
		if _, ok := m.Match(p); !ok {
			t.Errorf("%q (an rsync transfer) is not secret", p)
		}
	}
}

// TestCorpusCopies decorates every entry of the held-out corpus with every
// form and measures the contract on it: each copy of a secret path is secret
// (recall) and each copy of a look-alike is not (precision). It also keeps
// the names tools make far from the step bound: none may cost more than a
// sixteenth of maxSteps, so that a new form cannot bring a real name near
// the refusal unnoticed.
func TestCorpusCopies(t *testing.T) {
	t.Parallel()
	m, g := Default(), defaultGrammar()
	secrets := loadCorpus(t, "secret-paths.tsv")
	looks := loadCorpus(t, "lookalike-paths.tsv")
	var misses, falsePos, ambiguous []string
	total := [2]int{}
	costliest, costliestPath := 0, ""
	for si, set := range [][]corpusEntry{secrets, looks} {
		want := si == 0
		for _, e := range set {
			for i := range g.forms {
				p, _ := example(&g.forms[i], e.path)
				total[si]++
				_, ok, steps := m.match(p)
				if steps > costliest {
					costliest, costliestPath = steps, p
				}
				if ok != want {
					if !want && dottedReading(m, &g.forms[i], e.path) {
						ambiguous = append(ambiguous, p)
						continue
					}
					if want {
						misses = append(misses, fmt.Sprintf("%s (%s of %s)", p, g.forms[i].shape, e.path))
					} else {
						falsePos = append(falsePos, fmt.Sprintf("%s (%s of %s)", p, g.forms[i].shape, e.path))
					}
				}
			}
		}
	}
	t.Logf("copies of secret paths: recall %.2f %% (%d/%d); copies of look-alikes: false positives %.2f %% (%d/%d)",
		100*(1-float64(len(misses))/float64(total[0])), total[0]-len(misses), total[0],
		100*float64(len(falsePos))/float64(total[1]), len(falsePos), total[1])
	t.Logf("copies of look-alikes read as copies of a hidden secret of the same name: %d %q", len(ambiguous), ambiguous)
	t.Logf("the costliest copy: %q, %d steps (the bound: %d)", costliestPath, costliest, maxSteps)
	if costliest > maxSteps/16 {
		t.Errorf("%q, a name a tool makes, costs %d steps, more than a sixteenth of the bound (%d)", costliestPath, costliest, maxSteps)
	}
	for _, s := range misses[:min(len(misses), 30)] {
		t.Errorf("miss: %s", s)
	}
	for _, s := range falsePos[:min(len(falsePos), 30)] {
		t.Errorf("false positive: %s", s)
	}
}

// dottedReading reports whether a copy of a look-alike is also, by its name
// alone, a copy of a secret dotfile: Vim and rsync put a dot in front of a
// name that has none, and not in front of one that has, so .passwd.swp is
// the swap of passwd or of .passwd. The grammar stays on the safe side.
func dottedReading(m *Matcher, f *form, base string) bool {
	if !hasKind(f.toks, tDotName) {
		return false
	}
	dir, name := "", base
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		dir, name = base[:i+1], base[i+1:]
	}
	_, ok := m.Match(dir + "." + name)
	return !strings.HasPrefix(name, ".") && ok
}

// fill repeats unit to n bytes.
func fill(unit string, n int) string {
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// costlyPath is fifteen folders named like a careless save of a backup of
// .ssh, and a file named the same way: the forms with a free name before
// spaces or dots ({name}{blanks}) or before '~' read each in many ways, and
// each folder is worth reading because it starts with a rule's folder name.
var costlyPath = strings.Repeat(".ssh"+fill("...... ~", 251)+"/", 15) + fill("...... ~", 255)

// hostilePaths are names and paths built to make the decoration search
// long: many places a hole can end, many layers, many folders named like a
// rule's folder, and 4096 bytes of path.
var hostilePaths = []string{
	strings.Repeat("(", 250) + ".env",
	strings.Repeat(" (1)", 60) + ".env",
	strings.Repeat("~", 250),
	".env" + strings.Repeat(" copy", 50),
	strings.Repeat("a.bak/", 600) + ".env.bak",
	strings.Repeat("%a", 120) + ".swp",
	strings.Repeat(".ssh.bak/", 400) + "x",
	"#" + strings.Repeat("!a", 120) + "#",
	strings.Repeat("x", 300) + ".bak",
	strings.Repeat(" (conflicted copy", 14) + ")" + strings.Repeat(")", 14),
	fill(".~1~", 255), fill("!.~1~", 255), fill("...", 255),
	".env" + fill(")........", 251),
	costlyPath,
	strings.Repeat(".aws"+fill(")........", 251)+"/", 15) + ".env" + fill(")........", 251),
	strings.Repeat("a/", 2047) + "b",
}

// A name's decorations are bounded by work, not by time: every segment
// looked at, every form tried on it and every step of matching one count,
// and the count stops at maxSteps for the hint and again for the reading,
// whatever the path. The costly path needs more: without the bound its
// reading goes on past twice the bound; with it, it stops there and is
// refused.
func TestDecorationSearchIsBounded(t *testing.T) {
	m := Default()
	for _, p := range hostilePaths {
		if len(p) > maxDecoratedPath {
			t.Fatalf("%d-byte hostile path is longer than a path can be; the grammar never looks at it", len(p))
		}
		if _, _, steps := m.match(p); steps > 2*(maxSteps+1) {
			t.Errorf("%d-byte hostile path %.40q took %d steps, more than twice %d", len(p), p, steps, maxSteps)
		}
	}

	unbounded := unboundedMatcher(t)
	if _, _, steps := unbounded.match(costlyPath); steps <= 2*(maxSteps+1) {
		t.Fatalf("the costly path takes %d steps without the bound; the test proves nothing", steps)
	} else {
		t.Logf("the costly path: %d steps without the bound", steps)
	}
	if !strings.Contains(tooCostly.Reason, fmt.Sprintf("more than %d steps", maxSteps)) {
		t.Errorf("the refusal says %q, not the bound %d", tooCostly.Reason, maxSteps)
	}
	r, ok, steps := m.match(costlyPath)
	if !ok || r.Reason != tooCostly.Reason || steps > 2*(maxSteps+1) {
		t.Errorf("the costly path: %v %q after %d steps; want refused as too costly within %d", ok, r.Reason, steps, 2*(maxSteps+1))
	}
	// The names a tool makes are far from the bound (TestCorpusCopies checks
	// a quarter of a million of them), three layers down included.
	for _, p := range []string{".env (copy).bak~", "#%home%ann%.env#~", ".ssh.bak/config.bak"} {
		r, ok, steps := m.match(p)
		if !ok || r.Reason == tooCostly.Reason || steps > maxSteps/16 {
			t.Errorf("%q: %v %q after %d steps; want secret by its rule, well within %d", p, ok, r.Reason, steps, maxSteps/16)
		}
	}
}

// unboundedMatcher is the table with a grammar whose step budget is out of
// reach.
func unboundedMatcher(t *testing.T) *Matcher {
	t.Helper()
	m, err := Compile(Table)
	if err != nil {
		t.Fatal(err)
	}
	g, err := compileGrammar(Decorations, copyWords)
	if err != nil {
		t.Fatal(err)
	}
	g.stepsForTest = 1 << 40
	m.grammar = g
	return m
}

// The hint, which every path goes through, allocates nothing for a path
// without a decoration.
func TestHintAllocatesNothing(t *testing.T) {
	m := Default()
	for _, p := range []string{"src/components/Button.tsx", "a/b/c/d/e/f/README.md", "node_modules/react/cjs/react.development.js", "x/100%.txt"} {
		if n := testing.AllocsPerRun(100, func() { m.Match(p) }); n != 0 {
			t.Errorf("%q: %v allocations per Match, want 0", p, n)
		}
	}
}

// wholePathReadings returns what the {%path} and {!path} forms read off seg.
func wholePathReadings(g *grammar, seg string) []string {
	var out []string
	for _, fi := range g.candidates(seg, nil) {
		f := &g.forms[fi]
		if !hasKind(f.toks, tPctPath) && !hasKind(f.toks, tBangPath) {
			continue
		}
		w := g.work()
		for _, name := range g.undecorated(f, seg, seg, &w, nil) {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// Vim and Neovim (a 'directory', 'backupdir' or 'undodir' ending in "//")
// and Emacs (backup-directory-alist, auto-save-file-name-transforms with
// uniquify) name what they keep in another folder by the file's absolute
// path, and the reading asks for that shape. Found by
// FuzzUndecoratedIsShorter: read off any name, "a%b" came back as "a/b",
// no shorter, so a chain of readings need not end; and a reading no tool
// makes decided names both ways: "password%list.txt", which the rules
// refuse, was freed as list.txt in a folder "password", and "x%.npmrc",
// which no tool names so, was refused as x/.npmrc.
func TestWholePathNamesAreAbsolute(t *testing.T) {
	g := defaultGrammar()
	for seg, want := range map[string]string{
		"%home%ann%.env":             "home/ann/.env",           // Vim's undo file, Unix
		"%home%ann%.env.swp":         "home/ann/.env",           // Vim's swap file
		"c%%users%ann%.env.swp":      "users/ann/.env",          // Vim on Windows: C:\Users\ann\.env
		"%%srv%share%.npmrc~":        "srv/share/.npmrc",        // Vim's backup of \\srv\share\.npmrc
		"%.env":                      ".env",                    // a file in the root folder
		"!home!ann!.env~":            "home/ann/.env",           // Emacs's backup
		"!home!ann!.env.~3~":         "home/ann/.env",           // Emacs's numbered backup
		"#!home!ann!.env#":           "home/ann/.env",           // Emacs's auto-save, uniquified
		"!drive_c!users!ann!.env~":   "users/ann/.env",          // Emacs on Windows: /drive_c for c:
		"!home!ann!my!!app!.pgpass~": "home/ann/my!app/.pgpass", // a '!' of the path, doubled
		"!!!x!.env~":                 "!x/.env",
		"a%b":                        "", // none of these is how a tool spells a path
		"x%.npmrc":                   "",
		"password%list.txt":          "",
		"c!!users!.env~":             "", // Emacs writes a drive as !drive_c!
		"a!b!.env~":                  "",
		"#a!.env#":                   "",
	} {
		got := wholePathReadings(g, seg)
		if want == "" && len(got) > 0 || want != "" && !slices.Contains(got, want) {
			t.Errorf("%q read as %q, want %q", seg, got, want)
		}
	}

	relative, err := compileGrammar(Decorations, copyWords)
	if err != nil {
		t.Fatal(err)
	}
	relative.relativePathsForTest = true
	if got := wholePathReadings(relative, "a%b"); !slices.Contains(got, "a/b") {
		t.Fatalf("relative readings of %q: %q; the test proves nothing", "a%b", got)
	}
	old, err := Compile(Table)
	if err != nil {
		t.Fatal(err)
	}
	old.grammar = relative
	m := Default()
	for _, c := range []struct {
		path   string
		secret bool
	}{{"password%list.txt", true}, {"notes/password%list.txt", true}, {"x%.npmrc", false}} {
		if _, ok := old.Match(c.path); ok == c.secret {
			t.Errorf("relative readings: %q secret %v; the test proves nothing", c.path, ok)
		}
		if r, ok := m.Match(c.path); ok != c.secret {
			t.Errorf("%q: secret %v (%s), want %v", c.path, ok, r.Reason, c.secret)
		}
	}
	for _, p := range []string{"home/ann/.vim/undo/%home%ann%app%.env", ".local/state/nvim/swap/%home%ann%.kube%config.swp",
		"vimfiles/swap/C%%Users%Ann%.npmrc.swp", ".emacs.d/backups/!home!ann!.pgpass~", "tmp/#!home!ann!.env#"} {
		if _, ok := m.Match(p); !ok {
			t.Errorf("%q is readable below the full grant", p)
		}
	}
}

// FuzzUndecoratedIsShorter: every name read off a segment is shorter than
// it, so no chain of decorations loops.
func FuzzUndecoratedIsShorter(f *testing.F) {
	g := defaultGrammar()
	for _, p := range append(slices.Clone(plantedCopies), ".env.Ab12Cd", "%home%x%.env", "#!a!b#", ". (1).env", "_BASE_1.env",
		"a%b", "c%%x", "!!!x!.env~", "c!!x!y~", "!drive_c!x~", "%.env") {
		f.Add(normalize(p))
	}
	f.Fuzz(func(t *testing.T, seg string) {
		if strings.Contains(seg, "/") {
			return
		}
		for _, fi := range g.candidates(seg, nil) {
			w := g.work()
			for _, name := range g.undecorated(&g.forms[fi], seg, seg, &w, nil) {
				if len(name) >= len(seg) {
					t.Fatalf("%q read as %q by %s", seg, name, g.forms[fi].shape)
				}
			}
		}
	})
}

// FuzzHintIsSound: a path the hint passes over is one the grammar would
// have left to the rules.
func FuzzHintIsSound(f *testing.F) {
	m := Default()
	for _, p := range append(slices.Clone(plantedCopies), "a/b (1).ts", ".ssh.bak/x", "x/.env.Ab12Cd") {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		v := m.plain(p, true)
		if v.hint {
			return
		}
		r, ok, _ := m.grammar.judge(m.dirs, p, v, m.plain)
		if ok != v.ok || r.Pattern != v.rule.Pattern {
			t.Fatalf("%q: the hint passed it over, the grammar says %v %q", p, ok, r.Reason)
		}
	})
}

// A rule's own name never reads as a decoration of a free one: the first
// form that reads a name decides, so terraform.tfstate.backup, shadow- and
// the rest stay secret through the names they are read as.
func TestRuleExamplesStaySecret(t *testing.T) {
	m := Default()
	for _, r := range Table {
		ex := exampleOf(r.Pattern)
		if _, ok := naiveMatch([]Rule{r}, ex); !ok {
			continue // TestEveryRuleHasAReasonASourceAndMatchesItsExample reports it
		}
		if _, ok := m.Match(ex); !ok {
			t.Errorf("%s: its example %q is not secret", r.Pattern, ex)
		}
	}
}

// The old matcher's behaviour this change alters on purpose: a copy of a
// look-alike is now free even when a rule matched its decorated name.
func TestCopiesOfLookalikesAreFreed(t *testing.T) {
	old, m := oldMatcher(t), Default()
	for _, p := range []string{"id_rsa.pub~", "secrets.go~", "docs/credentials.md~"} {
		if _, ok := old.Match(p); !ok {
			t.Errorf("old matcher: %q is not secret; the test proves nothing", p)
		}
		if r, ok := m.Match(p); ok {
			t.Errorf("%q matched %s (%s)", p, r.Pattern, r.Reason)
		}
	}
}

func TestGrammarRowsAreComplete(t *testing.T) {
	for _, d := range Decorations {
		if d.What == "" || d.Why == "" || d.Source == "" || len(d.Forms) == 0 {
			t.Errorf("%v: want forms, what, why and source", d.Forms)
		}
	}
	for _, bad := range []Decoration{
		{Forms: []string{"{name}{n}"}, What: "x", Why: "x", Source: "x"},           // no literal
		{Forms: []string{"{name}.{ext}"}, What: "x", Why: "x", Source: "x"},        // {ext} without {stem}
		{Forms: []string{"{name}{stem}.x{ext}"}, What: "x", Why: "x", Source: "x"}, // two names
		{Forms: []string{"{nme}.bak"}, What: "x", Why: "x", Source: "x"},           // unknown hole
		{Forms: []string{"{name}.bak"}, What: "x", Source: "x"},                    // no why
	} {
		if _, err := compileGrammar([]Decoration{bad}, copyWords); err == nil {
			t.Errorf("compileGrammar accepted %v", bad.Forms)
		}
	}
}
