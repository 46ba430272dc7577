package github

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/redact"
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
