package gate

import (
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// ToolEnv is the environment for another program that runs git itself in a
// checkout (gh, for example), built from environ (usually os.Environ()).
// Every inherited GIT_* variable and every variable that names a program git
// would run is dropped, for everyone. For a closed trust the closed gate's
// forced options go in as GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n /
// GIT_CONFIG_VALUE_n, which outrank every config file as -c does, plus the
// closed environment (seed Round 9, "gh running Git"). The credential helper
// is kept: such tools talk to the network.
func ToolEnv(t trust.Trust, environ []string) []string {
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") || namesProgram[name] {
			continue
		}
		env = append(env, kv)
	}
	if !t.Closed() {
		return env
	}
	opts := append(append([]Option{}, everyone...), closedAll...)
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(opts)))
	for i, o := range opts {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+o.Key, "GIT_CONFIG_VALUE_"+n+"="+o.Value)
	}
	for _, o := range append(append([]Option{}, closedEnv...), everyoneEnv...) {
		env = append(env, o.Key+"="+o.Value)
	}
	return env
}

// namesProgram lists variables outside GIT_* that name a program git runs.
var namesProgram = map[string]bool{
	"PAGER": true, "EDITOR": true, "VISUAL": true, "SSH_ASKPASS": true,
}
