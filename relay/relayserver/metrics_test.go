package relayserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// get answers a GET of url with an Authorization header when auth is set.
func get(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Found by a black-box attack: /metrics on the API answered anyone, with
// the node's name and its counts. The API answers 404 now; the metrics are
// on their own handler, which without a token answers anyone who reaches
// it (so the command serves it so only on loopback) and with one answers
// only a request bearing it.
func TestMetricsAreOffTheAPIAndBehindTheToken(t *testing.T) {
	r := startRelay(t, func(o *Options) { o.Node = "edge-7" })
	if code, body := get(t, r.url+"/metrics", ""); code != http.StatusNotFound || strings.Contains(body, "edge-7") {
		t.Fatalf("the API's /metrics: %d %q", code, body)
	}
	for _, path := range []string{"/healthz", "/readyz"} { // load balancers need these where they were
		if code, _ := get(t, r.url+path, ""); code != http.StatusOK {
			t.Fatalf("the API's %s: %d", path, code)
		}
	}

	open := httptest.NewServer(r.srv.MetricsHandler(""))
	defer open.Close()
	if code, body := get(t, open.URL+"/metrics", ""); code != http.StatusOK || !strings.Contains(body, `node="edge-7"`) {
		t.Fatalf("without a token the metrics handler answers anyone: %d", code)
	}

	token := strings.Repeat("ab", 32)
	guarded := httptest.NewServer(r.srv.MetricsHandler(token))
	defer guarded.Close()
	for _, auth := range []string{"", "Bearer ", "Bearer " + strings.Repeat("ab", 31) + "ac", "Bearer " + token[:63],
		"Bearer " + token + "x", "bearer " + token, "Basic " + token, token} {
		if code, body := get(t, guarded.URL+"/metrics", auth); code != http.StatusUnauthorized || strings.Contains(body, "edge-7") {
			t.Errorf("Authorization %q: %d", auth, code)
		}
	}
	if code, body := get(t, guarded.URL+"/metrics", "Bearer "+token); code != http.StatusOK || !strings.Contains(body, `gatehouse_relay_connections{node="edge-7"} 0`) {
		t.Fatalf("with the token: %d", code)
	}
	for _, path := range []string{"/", "/v1/config", "/healthz", "/metrics/x"} { // the metrics listener serves nothing else
		if code, _ := get(t, guarded.URL+path, "Bearer "+token); code != http.StatusNotFound {
			t.Errorf("the metrics listener's %s: %d", path, code)
		}
	}
}

func TestLoadMetricsToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	good := strings.Repeat("0123456789abcdef", 2)
	if got, err := LoadMetricsToken(write("ok", good+"\n", 0o600)); err != nil || got != good {
		t.Fatalf("a good token: %q %v", got, err)
	}
	for name, tc := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"readable": {good, 0o640, "other users can read"},
		"short":    {good[:31], 0o600, "31 bytes"},
		"space":    {good + " x", 0o600, "a space"},
		"long":     {strings.Repeat("a", maxMetricsToken+3), 0o600, "too large"},
	} {
		if _, err := LoadMetricsToken(write(name, tc.content, tc.mode)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "ok"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMetricsToken(filepath.Join(dir, "link")); err == nil {
		t.Error("a symlink was read")
	}
	if _, err := LoadMetricsToken(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file was taken")
	}
}
