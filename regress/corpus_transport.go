package regress

import (
	"os"
	"path/filepath"

	"github.com/gatehouse/gatehouse/trust"
)

// What a device may do through the transports beyond reading: a device
// below full that may neither read nor stage a secret file may not delete
// it either (docs/policy.md, "Secret files").

// gone says the checkout's file name no longer exists: the discard deleted it.
func gone(name string) func(e *Env, out string) bool {
	return func(e *Env, _ string) bool {
		_, err := os.Lstat(filepath.Join(e.Dir, name))
		return os.IsNotExist(err)
	}
}

func discardPaths(paths ...string) func(e *Env) map[string]any {
	return func(e *Env) map[string]any { return map[string]any{"target": "$target", "paths": paths} }
}

var transportCases = []Case{
	{Name: "discard-deletes-a-secret", Attack: "a control device that may not read .env deletes it with git.discard",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			e.Write(map[string]string{".env": "TOKEN=" + secretMarker + "\n"})
		},
		Fired:  gone(".env"),
		Method: "git.discard", Grant: trust.Control, Params: discardPaths(".env"), Want: refused(secretFile)},
	{Name: "discard-deletes-a-key", Attack: "a control device that may not read keys/id_rsa deletes it with git.discard",
		Build: func(e *Env) {
			e.Init(map[string]string{"a.txt": "a\n"})
			e.Write(map[string]string{"keys/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n"})
		},
		Fired:  gone("keys/id_rsa"),
		Method: "git.discard", Grant: trust.Control, Params: discardPaths("keys/id_rsa"), Want: refused(secretFile)},
}
