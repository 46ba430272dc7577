package github

import (
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/redact"
	"github.com/gatehouse/gatehouse/internal/refusal"
)

// F6: a job's log prints a private key. The whole block is masked, BEGIN
// to END, in the red team's log (gh run view --log's columns) and in
// GitHub's (a timestamp before each line), and when only the key's body is
// among the last lines kept. Masking off shows the body, as the old rule
// (the BEGIN line only) did.
func TestCleanLogKeyBlock(t *testing.T) {
	const body = "QyNTUxOQAAACDxEXAMPLEPRIVATEKEYMATERIALxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	red := "build\ttest\tT -----BEGIN OPENSSH PRIVATE KEY-----\nbuild\ttest\tT b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"build\ttest\tT " + body + "\nbuild\ttest\tT -----END OPENSSH PRIVATE KEY-----\n"
	var long strings.Builder
	long.WriteString("2026-12-02T07:00:00.0000000Z -----BEGIN RSA PRIVATE KEY-----\n")
	for range 2 * maxLogLines {
		long.WriteString("2026-12-02T07:00:00.0000000Z " + body + "\n")
	}
	long.WriteString("2026-12-02T07:00:00.0000000Z -----END RSA PRIVATE KEY-----\n2026-12-02T07:00:01.0000000Z done\n")
	for _, log := range []string{red, long.String()} {
		restore := redact.OffForTest()
		leaked, _, _ := cleanLog([]byte(log))
		restore()
		if !strings.Contains(strings.Join(leaked, "\n"), body) {
			t.Fatal("masking off did not show the key, so the check proves nothing")
		}
		lines, _, masked := cleanLog([]byte(log))
		text := strings.Join(lines, "\n")
		if strings.Contains(text, body) || strings.Contains(text, "b3BlbnNz") || strings.Contains(text, "-----") || masked != len(lines)-strings.Count(text, "done") {
			t.Fatalf("%d masked: %q", masked, text)
		}
		if log != red && (lines[0] != "2026-12-02T07:00:00.0000000Z ***" || lines[len(lines)-1] != "2026-12-02T07:00:01.0000000Z done") {
			t.Fatalf("timestamps: %q", lines)
		}
	}
}

// F9: gh's error output carries a token (the red team's gh-stderr-fake
// line). The refusal's sentence masks it, and still writes no local
// folder; masking off shows the token.
func TestGHFailureMasked(t *testing.T) {
	home := gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	const token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	stderr := "error: open " + home + "/.config/gh/hosts.yml: permission denied; token=" + token + " at ~/x and xoxb-1234567890-1234567890-abcdef"
	sentence := func() string {
		_, err := Item(ctx, openGH(t, dir, newRecordingGH(t, dir, stderr)), closed, "issue", 1)
		if !errors.Is(err, gate.ErrGHFailed) {
			t.Fatalf("%v", err)
		}
		return refusal.Sentence(err)
	}
	restore := redact.OffForTest()
	leaked := sentence()
	restore()
	if !strings.Contains(leaked, token) {
		t.Fatalf("masking off did not show the token, so the check proves nothing: %q", leaked)
	}
	s := sentence()
	want := "GitHub refused this: error: open ~/.config/gh/hosts.yml: permission denied; token=*** at ~/x and ***"
	if s != want {
		t.Fatalf("sentence %q, want %q", s, want)
	}
}

// A job's name and the address gh printed after a change are gh's text
// too, masked the same way.
func TestNamesAndAddressMasked(t *testing.T) {
	if got := cleanLine("deploy (ghs_0123456789abcdefghijABCDEFGHIJ0123)"); got != "deploy (***)" {
		t.Errorf("job name %q", got)
	}
	for out, want := range map[string]string{
		"https://github.com/octo/hello/pull/9\n":                       "https://github.com/octo/hello/pull/9",
		"https://x:glpat-abcdefghij0123456789@github.com/o/h/pull/9\n": "https://x:***@github.com/o/h/pull/9",
	} {
		if got := done([]byte(out)).URL; got != want {
			t.Errorf("%q: %q", out, got)
		}
	}
}

// A control character printed inside a token (a carriage return: "gh\rp_…")
// was turned into a space, which split the token into words the masking no
// longer read as one; it is now taken out (a second red team's finding).
func TestGHFailureControlInsideAToken(t *testing.T) {
	gittest.Home(t, "")
	dir := repoWith(t, map[string]string{"a.txt": "a\n"}, "remote.origin.url", "https://github.com/octo/hello.git")
	const body = "p_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	_, err := Item(ctx, openGH(t, dir, newRecordingGH(t, dir, "error: bad token gh\r"+body)), closed, "issue", 1)
	if s := refusal.Sentence(err); strings.Contains(s, body) || !strings.Contains(s, "***") {
		t.Fatalf("the device reads %q", s)
	}
}
