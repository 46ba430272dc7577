// Package secretfiles decides which paths are secret files: credentials,
// private keys, tokens, shell histories, password stores.
//
// It is the only place that decides it. fsguard asks it before reading,
// listing or searching a file for a device below the full grant, gate asks it
// before a diff section or a staged path reaches one, and audit and
// `gatehouse secrets check` ask it about what a repository tracks.
//
// The rules are data (Table, each with its reason) compiled once into a
// Matcher that answers from maps and short tables, with doublestar only for
// the few true globs; the answers are identical to matching each rule's
// pattern with doublestar one at a time, which the tests check.
//
// What it guarantees:
//   - Matching ignores letter case (macOS and Windows file systems do).
//   - A rule matches at any depth, on the path inside the checkout and, when
//     the checkout sits inside the home folder, on the path relative to home
//     (Scope): a checkout at ~/.aws must not turn ~/.aws/credentials into a
//     harmless-looking "credentials".
//   - Committed templates (.env.example), public keys outside ~/.ssh and
//     source files that merely mention credentials (secrets.go) are not
//     secret; exceptions belong to one rule and never free a file inside a
//     secret folder.
//   - A copy is as secret as the file it was made from: a name an editor,
//     file manager, version control, backup, sync or download tool makes
//     from another (.env copy, #.env#, key.pem.bak, .id_rsa.swp) is read
//     back through the tools' own forms (decorations.go, each with its
//     source) and judged by the name it was made from; a copy of a template
//     stays readable. Reading a name back is bounded in steps, and a name
//     that needs more is held secret (a cut-short reading could miss one).
//
// Known limits: the rules look at names only. A secret in a file with an
// innocent name (config.yaml holding a password) is not found; content
// scanning is a different tool's job. Copy words outside GNOME Files'
// translations (Finder's Japanese "のコピー") are not known, and a rotated
// name.1 is not a copy (it would take man pages such as secrets.5). The package never opens or stats a
// file: a caller holding a symlink must ask about what it resolves to.
package secretfiles

import (
	"path/filepath"
	"strings"
	"sync"
)

// Default returns the matcher for Table, compiled on first use.
var Default = sync.OnceValue(func() *Matcher {
	m, err := Compile(Table)
	if err != nil {
		panic("secretfiles: the built-in table does not compile: " + err.Error())
	}
	return m
})

// Scope matches paths of one checkout: inside it, and relative to the home
// folder when the checkout sits inside home.
type Scope struct {
	m          *Matcher
	home       string // canonical home folder, "" if unknown
	homePrefix string // the checkout relative to home ("" outside home, "." for home itself)
}

// For returns the scope of the checkout at the canonical path root, with home
// the canonical home folder ("" when there is none).
func (m *Matcher) For(root, home string) Scope {
	s := Scope{m: m, home: home}
	if home != "" {
		if rel, ok := within(home, root); ok {
			s.homePrefix = rel
		}
	}
	return s
}

// Match reports the rule that makes rel (a slash path inside the checkout)
// secret, checking it as given and as seen from home.
func (s Scope) Match(rel string) (Rule, bool) {
	if r, ok := s.m.Match(rel); ok {
		return r, true
	}
	if s.homePrefix != "" && s.homePrefix != "." {
		return s.m.Match(s.homePrefix + "/" + rel)
	}
	return Rule{}, false
}

// MatchAbs reports the rule that makes the absolute path abs secret: what a
// symlink resolves to outside its checkout, or a path named on the command
// line. Inside home it is matched relative to home; elsewhere as a whole.
func (s Scope) MatchAbs(abs string) (Rule, bool) {
	if s.home != "" {
		if rel, ok := within(s.home, abs); ok && rel != "." {
			return s.m.Match(rel)
		}
	}
	return s.m.Match(filepath.ToSlash(abs))
}

// within returns path relative to dir when path is dir or inside it.
func within(dir, path string) (string, bool) {
	if path == dir {
		return ".", true
	}
	prefix := strings.TrimSuffix(dir, string(filepath.Separator)) + string(filepath.Separator)
	if rest, ok := strings.CutPrefix(path, prefix); ok {
		return filepath.ToSlash(rest), true
	}
	return "", false
}
