package gate

import (
	"slices"
	"strings"
	"testing"
)

// exampleKey turns a pattern into a key of its family.
func exampleKey(pattern string) string {
	k := strings.Replace(pattern, ".**", ".x.y", 1)
	k = strings.Replace(k, ".*.", ".x.", 1)
	return strings.Replace(k, ".?.", ".x.", 1)
}

// Every key git documents as running a program, reaching the network or
// naming a file is handled, by something that really exists.
func TestEveryProgramKeyIsHandled(t *testing.T) {
	forcedKeys := map[string]bool{}
	for _, list := range [][]Option{everyone, closedAll, closedOffline, closedEnv, everyoneEnv} {
		for _, o := range list {
			forcedKeys[strings.ToLower(o.Key)] = true
		}
	}
	forcedKeys["filter.<driver>.clean"] = true // classify adds it for every driver the config defines
	flags := map[string]bool{"--no-pager": true, "--no-textconv": true}
	for _, f := range append(slices.Clone(diffFlags), blameFlags...) {
		flags[f] = true
	}
	// Keys the allowlist takes although they could matter, because something
	// else handles them on every closed call: forced (fsmonitor, hooksPath,
	// quotePath), or a Read refusal every change also applies (a non-empty
	// extensions.partialClone).
	allowedOnPurpose := map[string]bool{"core.fsmonitor": true, "core.hookspath": true, "core.quotepath": true, "extensions.partialclone": true}
	for _, k := range programKeys {
		key := exampleKey(k.Pattern)
		switch k.Handled {
		case handledRead:
			if _, ok := firstRule(readRefusals, key); !ok {
				t.Errorf("%s: said to be refused by the Read gate, which does not know %s", k.Pattern, key)
			}
		case handledForced:
			if !forcedKeys[strings.ToLower(k.By)] {
				t.Errorf("%s: said to be forced by %q, which is not forced", k.Pattern, k.By)
			}
		case handledFlag:
			if !flags[k.By] {
				t.Errorf("%s: said to be handled by the flag %q, which is not passed", k.Pattern, k.By)
			}
		case handledChange, handledProtected:
		default:
			t.Errorf("%s: unknown handling", k.Pattern)
		}
		if r, ok := firstRule(allowlist, key); ok && !allowedOnPurpose[key] {
			t.Errorf("%s: the allowlist takes %s (%s)", k.Pattern, key, r.Pattern)
		}
		if k.Reason == "" {
			t.Errorf("%s has no reason", k.Pattern)
		}
	}
}

func TestTablesHaveReasons(t *testing.T) {
	for _, list := range [][]Option{everyone, closedAll, closedOffline, closedEnv, everyoneEnv, noHooks} {
		for _, o := range list {
			if o.Reason == "" {
				t.Errorf("forced %s has no reason", o.Key)
			}
		}
	}
	for _, list := range [][]configRule{allowlist, readRefusals} {
		for _, r := range list {
			if r.Reason == "" || r.Pattern != strings.ToLower(r.Pattern) {
				t.Errorf("rule %s: reason %q (patterns are lower case)", r.Pattern, r.Reason)
			}
		}
	}
}

func TestNetworkURLs(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://github.com/a/b": true, "http://h/x": true, "ssh://git@h:22/x": true, "git://h/x": true,
		"git+ssh://h/x": true, "ssh+git://h/x": true, "git@github.com:a/b.git": true, "host.example:path": true,
		"/abs/path": false, "./rel": false, "../rel": false, "file:///x": false, "ext::sh -c x": false,
		"fd::3": false, "C:path": false, "c:\\x": false, "-oProxyCommand=x:y": false, "ssh://-oProxyCommand=x/y": false,
		"persistent-https://h/x": false, "h::x": false, "": false, "https://h/x y": false, "x": false,
	} {
		if isNetworkURL(u) != ok {
			t.Errorf("isNetworkURL(%q) = %v", u, !ok)
		}
	}
}
