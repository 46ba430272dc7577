package relay

// The account and device as the relay's API and presence frames show them:
// the relay server writes these, a client reads them.

// Account is a relay account.
type Account struct {
	ID        string `json:"id"`
	Login     string `json:"login"`
	AvatarURL string `json:"avatarUrl"`
}

// Device is a device row as presence shows it.
type Device struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Platform  string `json:"platform"`
	PublicKey string `json:"publicKey"` // standard base64 of the X25519 key
	Host      bool   `json:"host"`
	Online    bool   `json:"online"`
	LastSeen  int64  `json:"lastSeen"` // unix milliseconds, 0 if never
}
