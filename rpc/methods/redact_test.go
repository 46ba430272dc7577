package methods_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/redact"
	"github.com/gatehouse/gatehouse/trust"
)

// keyLog is a failed job's log as GitHub serves it (a timestamp before each
// line) that prints a private key, then a token.
const keyLog = "2026-11-01T14:00:00.0000000Z ##[group]Run cat deploy_key\n" +
	"2026-11-01T14:00:00.1000000Z -----BEGIN OPENSSH PRIVATE KEY-----\n" +
	"2026-11-01T14:00:00.1000000Z b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
	"2026-11-01T14:00:00.1000000Z QyNTUxOQAAACDxKEYBODYMARKERxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n" +
	"2026-11-01T14:00:00.1000000Z -----END OPENSSH PRIVATE KEY-----\n" +
	"2026-11-01T14:00:01.0000000Z push with glpat-abcdefghij0123456789 failed\n" +
	"2026-11-01T14:00:02.0000000Z ##[error]Process completed with exit code 1.\n"

// A view device through the real dispatch and the real gh: a job log's
// private key is masked whole (F6) and a token in gh's error output is
// masked in the refusal's sentence (F9). Each is shown leaking first with
// masking switched off, so the check is known to see the leak.
func TestRunLogAndRefusalMaskedThroughRealGH(t *testing.T) {
	h, id, fake := ghThroughFake(t, trust.View)
	fake.Mu.Lock()
	fake.Data.Runs["octo/hello"][0].Jobs[1].Log = keyLog
	fake.Mu.Unlock()
	var log struct {
		Jobs []struct {
			Lines  []string
			Masked int
		}
	}
	runLog := func() string {
		t.Helper()
		h.ok(t, "github.runLog", map[string]any{"target": id, "id": 100}, &log)
		if len(log.Jobs) != 1 {
			t.Fatalf("run log: %+v", log)
		}
		return strings.Join(log.Jobs[0].Lines, "\n")
	}
	restore := redact.OffForTest()
	leaked := runLog()
	restore()
	if !strings.Contains(leaked, "KEYBODYMARKER") || !strings.Contains(leaked, "glpat-") {
		t.Fatalf("with masking off the log did not show the key, so the check proves nothing: %q", leaked)
	}
	text := runLog()
	for _, s := range []string{"KEYBODYMARKER", "b3BlbnNzaC1rZXkt", "BEGIN", "END OPENSSH", "glpat-"} {
		if strings.Contains(text, s) {
			t.Fatalf("%q reached a view device: %q", s, text)
		}
	}
	if !strings.Contains(text, "2026-11-01T14:00:00.1000000Z ***\n2026-11-01T14:00:00.1000000Z ***") || log.Jobs[0].Masked != 5 ||
		!strings.Contains(text, "exit code 1") {
		t.Fatalf("masked log: %d masked, %q", log.Jobs[0].Masked, text)
	}

	fake.Mu.Lock()
	fake.Data.Runs["octo/hello"][0].Jobs[1].LogRefusal = "Resource not accessible with ghp_0123456789abcdefghijABCDEFGHIJ012345"
	fake.Mu.Unlock()
	restore = redact.OffForTest()
	r := h.call(t, "github.runLog", map[string]any{"target": id, "id": 100})
	restore()
	if r.OK || !strings.Contains(r.Error, "ghp_0123456789") {
		t.Fatalf("with masking off the refusal did not show gh's token, so the check proves nothing: %+v", r)
	}
	h.refused(t, "github.runLog", map[string]any{"target": id, "id": 100}, r.Code, "GitHub refused this: gh: Resource not accessible with *** (HTTP 403)")
}
