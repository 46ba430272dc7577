package gate

import (
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/trust"
)

// ToolEnv is the environment for another program that runs git itself in a
// checkout for a phone (gh, for example), built from environ (usually
// os.Environ()). Like the runner's environment it is an allowlist, for
// everyone: the runner's variables (keepEnv), the SSH agent (such tools talk
// to the network), and the tool's own sign-in and configuration (toolEnv).
// Nothing else survives, so no inherited GIT_* and no variable naming a
// program (GIT_SSH_COMMAND, PAGER, GH_EDITOR, BROWSER...) reaches the tool
// or the git it starts. For a closed trust the closed gate's forced options
// go in as GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n, which
// outrank every config file as -c does, plus the closed environment (seed
// Round 9, "gh running Git"). The credential helper is kept: such tools
// push and fetch.
func ToolEnv(t trust.Trust, environ []string) []string {
	keep := append(append(append([]string{}, keepEnv...), networkEnv...), toolEnv...)
	var env []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); kept(name, keep) {
			env = append(env, kv)
		}
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

// toolEnv is what a tool that runs git for a phone keeps beyond the
// runner's allowlist, each for the reason beside it. None names a program.
var toolEnv = []string{
	"GH_TOKEN", "GITHUB_TOKEN", // gh's sign-in, as the user set it
	"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", // the same, for GitHub Enterprise
	"GH_HOST",                                                             // which GitHub the user works with
	"GH_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", // where gh keeps its sign-in and settings
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", // the user's way out to the network
	"SSL_CERT_FILE", "SSL_CERT_DIR", // the certificates the user's network needs
}
