package gate

// PolicyTables are the gate's lists, for `gatehouse policy`: what every call
// and every closed call forces, the Change gate's allowlist, the Read gate's
// refusals, and how each documented program key is handled.
type PolicyTables struct {
	Everyone      []Option      `json:"everyone"`
	Closed        []Option      `json:"closed"`
	ClosedOffline []Option      `json:"closedOffline"`
	Env           []Option      `json:"env"`
	ClosedEnv     []Option      `json:"closedEnv"`
	KeptEnv       []string      `json:"keptEnv"`
	Allowlist     []PolicyRule  `json:"allowlist"`
	ReadRefusals  []PolicyRule  `json:"readRefusals"`
	ProgramKeys   []PolicyEntry `json:"programKeys"`
}

// PolicyRule is one line of the allowlist or the Read gate.
type PolicyRule struct {
	Pattern string `json:"pattern"`
	Value   string `json:"value,omitempty"`
	Reason  string `json:"reason"`
}

// PolicyEntry is one documented program key and its handling.
type PolicyEntry struct {
	Pattern string `json:"pattern"`
	Handled string `json:"handled"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason"`
}

// Policy returns copies of the gate's tables.
func Policy() PolicyTables {
	p := PolicyTables{
		Everyone: append([]Option{}, everyone...), Closed: append([]Option{}, closedAll...),
		ClosedOffline: append([]Option{}, closedOffline...), Env: append([]Option{}, everyoneEnv...),
		ClosedEnv: append([]Option{}, closedEnv...), KeptEnv: append(append([]string{}, keepEnv...), "LC_*", "SSH_AUTH_SOCK (pushes and fetches)"),
	}
	for _, r := range allowlist {
		p.Allowlist = append(p.Allowlist, PolicyRule{r.Pattern, kindName(r.Value), r.Reason})
	}
	for _, r := range readRefusals {
		p.ReadRefusals = append(p.ReadRefusals, PolicyRule{r.Pattern, kindName(r.Value), r.Reason})
	}
	for _, k := range programKeys {
		p.ProgramKeys = append(p.ProgramKeys, PolicyEntry{k.Pattern, string(k.Handled), k.By, k.Reason})
	}
	return p
}

func kindName(k valueKind) string {
	switch k {
	case boolValue:
		return "boolean"
	case networkURL:
		return "network URL"
	case remoteRef:
		return "remote name or network URL"
	case notFalse:
		return "refused unless false"
	case notEmpty:
		return "refused unless empty"
	}
	return ""
}
