package relay

import "time"

// A relay token is payload "." mac, where payload is base64url(JSON of
// Claims) and mac is the relay's HMAC-SHA256 of payload. The relay signs
// and checks tokens (relayserver); a client only reads the expiry, to know
// when to ask for a fresh one.

// TokenLife is how long a token is valid.
const TokenLife = 30 * 24 * time.Hour

// Claims are what a token says.
type Claims struct {
	Account string `json:"acct"`
	Device  string `json:"dev"`
	Issued  int64  `json:"iat"` // unix seconds
	Expires int64  `json:"exp"`
	Gen     string `json:"gen"`
}
