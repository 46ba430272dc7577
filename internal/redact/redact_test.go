package redact

import (
	"slices"
	"strings"
	"testing"
)

// The PEM kinds a scanner names (gitleaks' private-key rule), each as a
// job log prints it: GitHub Actions' timestamp before every line, gh run
// view --log's job and step columns before that, or nothing.
var keyKinds = []string{"RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY",
	"ENCRYPTED PRIVATE KEY", "PRIVATE KEY", "PGP PRIVATE KEY BLOCK", "ANY-OTHER PRIVATE KEY"}

var prefixes = []string{"", "2026-12-02T07:00:00.1234567Z ", "build\ttest\t2026-12-02T07:00:00.1234567Z "}

const body1, body2 = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "QyNTUxOQAAACDxEXAMPLEPRIVATEKEYMATERIAL"

func keyLog(prefix, kind string, end bool) []string {
	l := []string{prefix + "before", prefix + "-----BEGIN " + kind + "-----", prefix + "Proc-Type: 4,ENCRYPTED", prefix, prefix + body1, prefix + body2}
	if end {
		l = append(l, prefix+"-----END "+kind+"-----", prefix+"after")
	}
	return l
}

// A key's whole block is masked, BEGIN to END, every kind, every prefix;
// the prefix and the lines around it stay. With masking off (the old
// rule masked only the BEGIN line) the body reaches the caller.
func TestKeyBlock(t *testing.T) {
	for _, kind := range keyKinds {
		for _, p := range prefixes {
			restore := OffForTest()
			leaked := keyLog(p, kind, true)
			Lines(leaked)
			restore()
			if !strings.Contains(strings.Join(leaked, "\n"), body1) {
				t.Fatalf("%s: masking off did not show the body", kind)
			}
			got := keyLog(p, kind, true)
			n := Lines(got)
			want := []string{p + "before", p + Mask, p + Mask, p + Mask, p + Mask, p + Mask, p + Mask, p + "after"}
			if p != "" && !strings.HasSuffix(p, "Z ") || strings.Join(got, "\n") != strings.Join(want, "\n") || n != 6 {
				t.Errorf("%s %q: %d masked\n%q", kind, p, n, got)
			}
			cut := keyLog(p, strings.ToLower(kind), false)
			Lines(cut)
			for _, l := range cut[1:] {
				if l != p+Mask {
					t.Errorf("%s %q with no END: %q", kind, p, cut)
				}
			}
		}
	}
}

// A prefix that is not a log's timestamp is masked with the body (as the
// red team's fake log: "build\ttest\tT <body>").
func TestKeyBlockOtherPrefix(t *testing.T) {
	got := Text("build\ttest\tT -----BEGIN OPENSSH PRIVATE KEY-----\nbuild\ttest\tT " + body1 + "\nbuild\ttest\tT -----END OPENSSH PRIVATE KEY-----\nok")
	if got != "build\ttest\tT ***\n***\n***\nok" {
		t.Fatalf("%q", got)
	}
}

// One line: a key on one line (a JSON string, a variable), or its BEGIN
// alone, masks to END or the line's end.
func TestKeyOnOneLine(t *testing.T) {
	for in, want := range map[string]string{
		`KEY="-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----" next`: `KEY="***" next`,
		"x -----BEGIN EC PRIVATE KEY----- MIIEabc":                                           "x ***",
		"-----BEGIN PUBLIC KEY----- MIIBIjAN":                                                "-----BEGIN PUBLIC KEY----- MIIBIjAN",
	} {
		if got, _ := Line(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// Tokens in the forms gitleaks lists, a URL's password and NAME=value.
func TestValues(t *testing.T) {
	for in, want := range map[string]string{
		"token ghp_0123456789abcdefghijABCDEFGHIJ012345 used":             "token *** used",
		"gho_0123456789abcdefghijABCDEFGHIJ012345":                        "***",
		"ghs_0123456789abcdefghijABCDEFGHIJ012345,":                       "***,",
		"ghu_0123456789abcdefghijABCDEFGHIJ012345":                        "***",
		"ghr_0123456789abcdefghijABCDEFGHIJ012345":                        "***",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv":           "***",
		"glpat-abcdefghij0123456789":                                      "***",
		"xoxb-1234567890-1234567890-abcdefABCDEF":                         "***",
		"xoxp-1234567890-1234567890-1234567890-abcdef":                    "***",
		"xapp-1-A0123456789-0123456789-abcdef":                            "***",
		"AWS AKIAIOSFODNN7EXAMPLE":                                        "AWS ***",
		"sk_live_0123456789abcdef":                                        "***",
		"rk_test_0123456789abcdef":                                        "***",
		"AIzaSyA0123456789abcdefghijklmnopqrstuv":                         "***",
		"npm_0123456789abcdefghijklmnopqrstuvwxyz":                        "***",
		"sk-proj-0123456789abcdefghij":                                    "***",
		"export API_KEY=\"abc def\"":                                      "export API_KEY=***",
		"Authorization: Bearer abcdefghijkl":                              "Authorization: Bearer ***",
		"git clone https://user:pa55@example.com/x":                       "git clone https://user:***@example.com/x",
		"author: alice":                                                   "author: alice",
		"TOKEN=***":                                                       "TOKEN=***",
		"ghp_short":                                                       "ghp_short",
		"bad credentials: token 0123456789abcdef0123456789abcdef01234567": "bad credentials: token ***",
		"an invalid token was given":                                      "an invalid token was given",
	} {
		got, hit := Line(in)
		if got != want || hit != (in != want) {
			t.Errorf("%q: got %q %v, want %q", in, got, hit, want)
		}
	}
}

// No BEGIN marker and no token survives masking, whatever the text.
func FuzzLines(f *testing.F) {
	f.Add("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nghp_0123456789abcdefghijABCDEFGHIJ012345")
	f.Fuzz(func(t *testing.T, s string) {
		lines := strings.Split(s, "\n")
		Lines(lines)
		if len(lines) != strings.Count(s, "\n")+1 {
			t.Fatal("line count changed")
		}
		for _, l := range lines {
			if keyBegin.MatchString(l) || tokens.MatchString(l) {
				t.Fatalf("%q kept in %q", l, lines)
			}
		}
	})
}

// Text masks text of any number of lines, as Lines does.
func Text(s string) string {
	lines := strings.Split(s, "\n")
	Lines(lines)
	return strings.Join(lines, "\n")
}

// A PuTTY key file is masked from its first line to its Private-MAC line,
// the MAC included, with a log line's timestamp kept (a second red team
// found its private line in clear in a job's log).
func TestPuTTYKey(t *testing.T) {
	const private = "AAAAIKxyzSecretPrivatePartOfTheKey0123456789abcd"
	log := []string{
		"2026-12-02T07:00:00.0000000Z PuTTY-User-Key-File-3: ssh-ed25519",
		"2026-12-02T07:00:00.0000000Z Encryption: none",
		"2026-12-02T07:00:00.0000000Z Comment: ed25519-key",
		"2026-12-02T07:00:00.0000000Z Public-Lines: 2",
		"2026-12-02T07:00:00.0000000Z AAAAC3NzaC1lZDI1NTE5AAAAIPublicPart",
		"2026-12-02T07:00:00.0000000Z Private-Lines: 1",
		"2026-12-02T07:00:00.0000000Z " + private,
		"2026-12-02T07:00:00.0000000Z Private-MAC: 0123456789abcdef0123456789abcdef",
		"2026-12-02T07:00:01.0000000Z next step",
	}
	restore := OffForTest()
	plain := slices.Clone(log)
	Lines(plain)
	restore()
	if !strings.Contains(strings.Join(plain, "\n"), private) {
		t.Fatal("not reproduced: without masking the private line is gone")
	}
	Lines(log)
	all := strings.Join(log, "\n")
	if strings.Contains(all, private) || strings.Contains(all, "0123456789abcdef0123456789abcdef") {
		t.Fatalf("the key's private part or MAC survives:\n%s", all)
	}
	if log[8] != "2026-12-02T07:00:01.0000000Z next step" || !strings.HasPrefix(log[6], "2026-12-02T07:00:00.0000000Z ") {
		t.Fatalf("what follows the key, or a line's timestamp, is lost:\n%s", all)
	}
}
