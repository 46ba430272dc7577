package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxGitHubAnswer bounds what a device reads of GitHub's answer.
const maxGitHubAnswer = 1 << 20

// DeviceFlow signs in to GitHub with the OAuth device flow, for
// gatehouse login: it asks for a code (no scope: identity only), shows the
// person the code and where to enter it, and polls until GitHub issues a
// token, the code expires, or ctx ends. base is https://github.com (tests
// use a local fake). The token goes to the relay once and is not kept.
func DeviceFlow(ctx context.Context, hc *http.Client, base, clientID string, show func(userCode, verifyURL string)) (string, error) {
	base = strings.TrimSuffix(base, "/")
	var code struct {
		DeviceCode      string `json:"device_code"`
		UserCode        string `json:"user_code"`
		VerificationURI string `json:"verification_uri"`
		ExpiresIn       int    `json:"expires_in"`
		Interval        int    `json:"interval"`
	}
	if err := githubForm(ctx, hc, base+"/login/device/code", map[string]string{"client_id": clientID, "scope": ""}, &code); err != nil {
		return "", err
	}
	if code.DeviceCode == "" || code.UserCode == "" {
		return "", errors.New("relay: GitHub gave no device code")
	}
	show(code.UserCode, code.VerificationURI)
	interval := time.Duration(max(code.Interval, 1)) * time.Second
	expires := time.Now().Add(time.Duration(max(code.ExpiresIn, 60)) * time.Second)
	for time.Now().Before(expires) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(interval):
		}
		var tok struct {
			AccessToken string `json:"access_token"`
			Error       string `json:"error"`
			Interval    int    `json:"interval"`
		}
		if err := githubForm(ctx, hc, base+"/login/oauth/access_token", map[string]string{"client_id": clientID,
			"device_code": code.DeviceCode, "grant_type": "urn:ietf:params:oauth:grant-type:device_code"}, &tok); err != nil {
			return "", err
		}
		switch tok.Error {
		case "":
			if tok.AccessToken != "" {
				return tok.AccessToken, nil
			}
		case "authorization_pending":
		case "slow_down":
			interval = time.Duration(max(tok.Interval, int(interval/time.Second)+5)) * time.Second
		case "access_denied":
			return "", errors.New("the sign-in was declined on GitHub")
		case "expired_token":
			return "", errors.New("the GitHub code expired; run gatehouse login again")
		default:
			return "", fmt.Errorf("GitHub: %s", tok.Error)
		}
	}
	return "", errors.New("the GitHub code expired; run gatehouse login again")
}

// githubForm POSTs a form to GitHub asking for JSON back.
func githubForm(ctx context.Context, hc *http.Client, u string, form map[string]string, out any) error {
	vals := url.Values{}
	for k, v := range form {
		vals.Set(k, v)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(vals.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("GitHub: %w", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxGitHubAnswer))
	if err != nil {
		return fmt.Errorf("GitHub: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GitHub answered %s", res.Status)
	}
	return json.Unmarshal(data, out)
}
