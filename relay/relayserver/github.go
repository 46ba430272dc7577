package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// GitHubApp is the relay's own GitHub OAuth app. A device signs in with the
// OAuth device flow (no client secret on the device) and sends the relay
// the token; the relay asks GitHub whether that token was issued to this
// app (POST /applications/{client_id}/token, with the client secret), so a
// token issued to any other app is refused, and takes the account's numeric
// id, login and avatar from the answer.
type GitHubApp struct {
	ClientID     string
	ClientSecret string
	// APIBase is GitHub's API ("https://api.github.com"); tests point it at
	// a local fake.
	APIBase string
	Client  *http.Client // nil: a client with a 10 s timeout
}

var errGitHubRefused = errors.New("relay: GitHub refused the token for this app")

// maxGitHubAnswer bounds what the relay reads of GitHub's answer.
const maxGitHubAnswer = 1 << 20

// check asks GitHub about token and returns the account it belongs to.
func (g *GitHubApp) check(ctx context.Context, token string) (Account, error) {
	var a Account
	body, _ := json.Marshal(map[string]string{"access_token": token})
	base := strings.TrimSuffix(g.APIBase, "/")
	if base == "" {
		base = "https://api.github.com"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/applications/"+g.ClientID+"/token", bytes.NewReader(body))
	if err != nil {
		return a, err
	}
	req.SetBasicAuth(g.ClientID, g.ClientSecret)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Content-Type", "application/json")
	c := g.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	res, err := c.Do(req)
	if err != nil {
		return a, fmt.Errorf("relay: GitHub: %w", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxGitHubAnswer))
	if err != nil {
		return a, fmt.Errorf("relay: GitHub: %w", err)
	}
	switch {
	case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusUnprocessableEntity:
		return a, errGitHubRefused // not a token of this app
	case res.StatusCode != http.StatusOK:
		return a, fmt.Errorf("relay: GitHub answered %s", res.Status)
	}
	var ans struct {
		App struct {
			ClientID string `json:"client_id"`
		} `json:"app"`
		User struct {
			ID        int64  `json:"id"`
			Login     string `json:"login"`
			AvatarURL string `json:"avatar_url"`
		} `json:"user"`
	}
	if err := json.Unmarshal(data, &ans); err != nil || ans.User.ID <= 0 || ans.User.Login == "" {
		return a, fmt.Errorf("relay: GitHub's answer has no user")
	}
	if ans.App.ClientID != "" && ans.App.ClientID != g.ClientID {
		return a, errGitHubRefused
	}
	return Account{ID: "gh:" + strconv.FormatInt(ans.User.ID, 10), Login: ans.User.Login, AvatarURL: ans.User.AvatarURL}, nil
}

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
