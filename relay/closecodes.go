package relay

// Close codes the relay sends.
const (
	CloseReplaced = 4000 // a newer socket for the same device
	CloseRevoked  = 4001 // device revoked or account deleted: sign out
)
