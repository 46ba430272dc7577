package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// hostileName is what a hostile relay or device calls itself: an escape
// that clears the screen, and a newline that forges a line of output.
const hostileName = "evil\x1b[2J\nSigned in to https://relay.example as root."

// A hostile relay's account name, device names and platforms, and its
// error sentences reach the terminal disarmed (internal/display): login,
// doctor, devices and call print them through display.Text.
func TestRelaySuppliedNamesAreDisarmed(t *testing.T) {
	relaySrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/auth/invite":
			_ = json.NewEncoder(w).Encode(map[string]any{"token": "e30.sig",
				"account": map[string]string{"id": "acct", "login": hostileName}})
		case "/v1/devices":
			_ = json.NewEncoder(w).Encode(map[string]any{"devices": []map[string]any{
				{"id": "d-aaaaaaaaaaaaaaaa", "name": hostileName, "platform": hostileName, "publicKey": ""}}})
		default:
			w.WriteHeader(http.StatusTeapot)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": hostileName})
		}
	}))
	defer relaySrv.Close()
	t.Setenv("GATEHOUSE_HOME", t.TempDir())

	runIt := func(stdin string, args ...string) (string, string) {
		var out, errb bytes.Buffer
		run(&env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args)
		return out.String(), errb.String()
	}
	check := func(what, text string) {
		t.Helper()
		if strings.Contains(text, "\x1b") || strings.Contains(text, "\nSigned in to https://relay.example") {
			t.Errorf("%s printed the relay's name raw:\n%q", what, text)
		}
		if !strings.Contains(text, `evil\x1b[2J\nSigned`) {
			t.Errorf("%s did not show the name quoted:\n%q", what, text)
		}
	}
	out, errOut := runIt("CODE\n", "login", "--relay", relaySrv.URL, "--invite", "-")
	check("login", out+errOut)
	out, _ = runIt("", "doctor")
	check("doctor", out)
	out, _ = runIt("", "devices")
	check("devices", out)
	_, errOut = runIt("", "logout")
	check("logout (the relay's error sentence)", errOut)

	var errb bytes.Buffer
	printCall(&env{stderr: &errb}, nil, errors.New(hostileName))
	check("call (a host's sentence)", errb.String())
}
