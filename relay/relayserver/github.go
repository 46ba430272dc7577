package relayserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/relay"
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
func (g *GitHubApp) check(ctx context.Context, token string) (relay.Account, error) {
	var a relay.Account
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
	return relay.Account{ID: "gh:" + strconv.FormatInt(ans.User.ID, 10), Login: ans.User.Login, AvatarURL: ans.User.AvatarURL}, nil
}
