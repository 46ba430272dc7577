// Package redact masks what looks like a secret in text another program
// printed (gh's error output, a CI job's log, a URL gh answered with)
// before a device sees it. It is the one place gatehouse decides what a
// secret's value looks like in such text; gate and github call it.
//
// What it masks, each with "***" (GitHub's own mask for a secret it knows):
//
//   - a private key's whole PEM block, from its BEGIN line to its END line,
//     for every kind a scanner names (RSA, EC, DSA, OPENSSH, ENCRYPTED,
//     plain PKCS#8, PGP PRIVATE KEY BLOCK, any other "... PRIVATE KEY"),
//     the text before BEGIN and after END on their lines kept, and a log
//     line's timestamp kept on the lines between;
//   - tokens in the forms public scanners list (gitleaks
//     config/gitleaks.toml, read at b58d3f1, July 2026; rule ids are beside
//     each pattern below: GitHub's ghp_, gho_, ghu_, ghs_, ghr_ and
//     github_pat_, GitLab's glpat-, Slack's xox?- and xapp-, AWS access key
//     ids, Stripe's sk_/rk_ live and test keys, Google's AIza keys, npm_,
//     OpenAI's sk-), each as a prefix and at least the shortest body the
//     scanner allows, so a longer token is masked whole;
//   - a PuTTY key file, from its first line to its Private-MAC line;
//   - a URL's password, NAME=value or NAME: value where the name says it
//     holds a secret (the names .env files and CI settings use), and a long
//     word after token, bearer, password or secret and a space.
//
// Known limits. A secret printed bare in no known form stays: this is a
// list, and no list is complete (GitHub masks in a run's log the secrets it
// gave the run). A BEGIN line with no END masks to the end of the text (a
// key cut short is still a key); text that merely names the marker (a
// scanner's own test output) loses the rest of its log that way, which is
// the side to err on. A token split by something printed in its middle is
// seen as two shorter strings and may stay.
package redact

import (
	"flag"
	"regexp"
	"strings"
	"sync/atomic"
)

// Mask is what a masked value reads as.
const Mask = "***"

// keyBegin and keyEnd are a PEM private key's armour lines, as gitleaks'
// private-key rule spells them (any case, any kind of key up to 100
// characters, "PRIVATE KEY BLOCK" for PGP).
// A PuTTY key file (.ppk, PuTTY's sshpubk.c) is a block too: from its
// first line to its Private-MAC line, the MAC included; its private lines
// are base64 with no armour of their own.
var (
	keyBegin = regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:`)
	keyEnd   = regexp.MustCompile(`(?i)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|Private-MAC:[ \t]*[0-9A-Fa-f]*`)
)

// logPrefix is what a CI log puts before each line and is kept on a
// key's body lines: GitHub Actions' timestamp, and before it gh run view
// --log's job and step columns.
var logPrefix = regexp.MustCompile(`^(?:[^\t]{0,256}\t[^\t]{0,256}\t)?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z ?`)

// tokens are credentials in the forms gitleaks lists (rule ids beside each),
// wherever they stand in a line. Bodies are "at least" the rule's length:
// masking more of a token-like word costs nothing.
var tokens = regexp.MustCompile(strings.Join([]string{
	`gh[pousr]_[A-Za-z0-9]{20,}`,                      // github-pat, -oauth, -app-token, -refresh-token (36 there)
	`github_pat_[A-Za-z0-9_]{20,}`,                    // github-fine-grained-pat (82 there)
	`glpat-[A-Za-z0-9_-]{20,}`,                        // gitlab-pat
	`xox[abeoprs]-[A-Za-z0-9-]{8,}`,                   // slack-bot, -user, -legacy, -legacy-workspace tokens
	`xapp-\d-[A-Za-z0-9-]{10,}`,                       // slack-app-token
	`(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}`, // aws-access-token
	`(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}`,   // stripe-access-token
	`AIza[0-9A-Za-z_-]{35}`,                           // gcp-api-key
	`npm_[A-Za-z0-9]{36}`,                             // npm-access-token
	`sk-[A-Za-z0-9_-]{20,}`,                           // openai-api-key and look-alikes
}, "|"))

// spoken is a credential after a word that names it and a space, as error
// messages put it ("token 0123…", "Bearer eyJ…"): the value is masked when
// it is one word of at least 20 characters, as a token is.
var spoken = regexp.MustCompile(`(?i)(\b(?:token|bearer|password|secret)\s+)([A-Za-z0-9_\-./+=]{20,})`)

// urlPassword is the password in scheme://user:password@host.
var urlPassword = regexp.MustCompile(`(://[^/\s:@]+:)[^@\s/]+@`)

// assignment is NAME=value or NAME: value where the name says it holds a
// secret (the names .env files and CI settings use).
var assignment = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key|private[_-]?key|credential|authorization)[A-Za-z0-9_.-]*["']?\s*[:=]\s*(?:bearer\s+|basic\s+|token\s+)?)("[^"]*"|'[^']*'|\S+)`)

// off is the switch OffForTest turns.
var off atomic.Bool

// OffForTest switches masking off until restore is called, so a test can
// show what would reach a device without it. It panics outside a test
// binary (one whose flags hold test.v, which package testing registers;
// importing testing here would put test code in gatehouse's binary).
func OffForTest() (restore func()) {
	if flag.Lookup("test.v") == nil {
		panic("redact: OffForTest outside a test")
	}
	off.Store(true)
	return func() { off.Store(false) }
}

// Line masks one line on its own: a key's BEGIN masks to the line's end
// (or its END on the same line). It says whether anything was masked.
func Line(s string) (string, bool) {
	out, _ := line(s, false)
	return out, out != s
}

// Lines masks lines in order, in place, a private key's block across them,
// and returns how many lines changed.
func Lines(lines []string) int {
	n, inKey := 0, false
	for i, s := range lines {
		lines[i], inKey = line(s, inKey)
		if lines[i] != s {
			n++
		}
	}
	return n
}

// line masks s, inside a key's block when inKey (from the previous line),
// and says whether the block goes on past it.
func line(s string, inKey bool) (string, bool) {
	if off.Load() {
		return s, false
	}
	var b strings.Builder
	for {
		if inKey {
			end := keyEnd.FindStringIndex(s)
			if end == nil {
				return b.String() + keep(s) + Mask, true
			}
			b.WriteString(keep(s[:end[0]]) + Mask)
			s, inKey = s[end[1]:], false
			continue
		}
		begin := keyBegin.FindStringIndex(s)
		if begin == nil {
			b.WriteString(values(s))
			return b.String(), false
		}
		b.WriteString(values(s[:begin[0]]))
		s, inKey = s[begin[1]:], true
	}
}

// keep is the log prefix of a key's body line, kept; the rest is masked.
func keep(s string) string {
	return logPrefix.FindString(s)
}

// values masks tokens, a URL's password and secret assignments in text
// outside a key's block.
func values(s string) string {
	s = tokens.ReplaceAllString(s, Mask)
	s = spoken.ReplaceAllString(s, "${1}"+Mask)
	s = urlPassword.ReplaceAllString(s, "${1}"+Mask+"@")
	return assignment.ReplaceAllString(s, "${1}"+Mask)
}
