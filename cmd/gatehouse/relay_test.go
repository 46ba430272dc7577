package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The relay refuses, before anything listens, metrics that others could
// read and proxy flags that do not fit together.
func TestRelayFlagsRefuse(t *testing.T) {
	data := t.TempDir()
	open := filepath.Join(t.TempDir(), "open-token")
	if err := os.WriteFile(open, []byte(strings.Repeat("a", 64)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-listen", "0.0.0.0:0"}, "reachable from other machines"},
		{[]string{"--metrics-listen", ":0"}, "reachable from other machines"},
		{[]string{"--metrics-listen", "localhost:0"}, "reachable from other machines"},
		{[]string{"--metrics-token-file", open}, "goes with --metrics-listen"},
		{[]string{"--metrics-listen", "0.0.0.0:0", "--metrics-token-file", open}, "other users can read"},
		{[]string{"--proxy-hops", "2"}, "--proxy-hops goes with --proxy-header"},
		{[]string{"--proxy-header", "X-Forwarded-For", "--proxy-hops", "9"}, "1 to 8 are allowed"},
	} {
		code, _, errOut := runRelayCmd(t, append([]string{"relay", "--data", data, "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("relay %v: exit %d, %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestRelayMetricsCheck(t *testing.T) {
	for _, tc := range []struct {
		m  relayMetrics
		ok bool
	}{
		{relayMetrics{}, true},
		{relayMetrics{addr: "127.0.0.1:9090"}, true},
		{relayMetrics{addr: "[::1]:9090"}, true},
		{relayMetrics{addr: "10.0.0.2:9090"}, false},
		{relayMetrics{addr: "10.0.0.2:9090", tokenFile: "t"}, true},
		{relayMetrics{addr: "[::]:9090"}, false},
		{relayMetrics{addr: "metrics.internal:9090"}, false},
		{relayMetrics{tokenFile: "t"}, false},
	} {
		if err := tc.m.check(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.m, err)
		}
	}
}

// The command serves the metrics on --metrics-listen behind the token, and
// never on the API, where /healthz and /readyz stay.
func TestRelayServesMetricsApart(t *testing.T) {
	dir := t.TempDir()
	token := strings.Repeat("0123456789abcdef", 4)
	tokenFile := filepath.Join(dir, "metrics-token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(dir, "relay.url")
	cmd := exec.Command("gatehouse", "relay", "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0",
		"--ready-file", ready, "--metrics-listen", "127.0.0.1:0", "--metrics-token-file", tokenFile, "--node", "edge-9")
	cmd.Env = append(os.Environ(), "GATEHOUSE_HOME="+filepath.Join(dir, "state"))
	stderr, logs := io.Pipe()
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("the relay's exit: %v", err)
		}
		logs.Close()
	}()
	metricsURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`msg="relay metrics listening" url=(\S+) token=true`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				metricsURL <- m[1]
			}
		}
	}()
	var murl string
	select {
	case murl = <-metricsURL:
	case <-time.After(20 * time.Second):
		t.Fatal("the metrics listener was not logged")
	}
	var api string
	for deadline := time.Now().Add(20 * time.Second); api == ""; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(ready); err == nil {
			api = strings.TrimSpace(string(b))
		} else if time.Now().After(deadline) {
			t.Fatal("the relay did not write its ready file")
		}
	}

	get := func(url, auth string) (int, string) {
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
	if code, body := get(api+"/metrics", "Bearer "+token); code != http.StatusNotFound || strings.Contains(body, "edge-9") {
		t.Errorf("the API's /metrics: %d", code)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := get(api+path, ""); code != http.StatusOK {
			t.Errorf("the API's %s: %d", path, code)
		}
	}
	if code, body := get(murl, ""); code != http.StatusUnauthorized || strings.Contains(body, "edge-9") {
		t.Errorf("the metrics without the token: %d", code)
	}
	if code, body := get(murl, "Bearer "+token); code != http.StatusOK || !strings.Contains(body, `gatehouse_relay_connections{node="edge-9"} 0`) {
		t.Errorf("the metrics with the token: %d", code)
	}
}
