package methods_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/secretfiles"
	"github.com/gatehouse/gatehouse/trust"
)

// A checkout that holds gatehouse's state folder (a home folder kept in git,
// GATEHOUSE_HOME inside a checkout) is served only at full. Only file reads
// refused it: a control phone staged the state folder's lan.json and read
// it with git.diff (every device's stored secret, so it then called as the
// full device), and git.discard deleted the request log and the pairings.
// The host now refuses the whole project below full, for every method.
func TestAProjectHoldingTheStateFolderIsServedOnlyAtFull(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"README.md": "hi\n"})
	state := filepath.Join(dir, "st")
	// settings.json, committed while Full access was on: discarding the
	// change that turned it off turns it on again. (lan.json is also a
	// secret by its name, a second wall; this test shows the project rule
	// alone.)
	gittest.Write(t, dir, map[string]string{"st/settings.json": `{"fullAccess":true}` + "\n", "st/requests.log": "line\n"})
	gittest.Git(t, dir, "add", "st/requests.log", "st/settings.json")
	gittest.Git(t, dir, "commit", "-qm", "the state folder, tracked by mistake")
	gittest.Write(t, dir, map[string]string{"st/settings.json": `{"fullAccess":false}` + "\n"})

	serve := func(g trust.Grant, ruleOff bool) (*host, string) {
		h := newHostWith(t, g, fsguard.Options{Home: "/nonexistent-home", StateDir: state}, rpc.HostOptions{ProjectRuleOffForTest: ruleOff}, dir)
		return h, h.ids[dir]
	}

	// The attack without the rule: files.read is refused, git is not.
	h, id := serve(trust.Control, true)
	h.refused(t, "files.read", map[string]any{"target": id, "path": "st/settings.json"}, rpc.CodeRefused, "holds gatehouse's own data")
	var d struct{ Diff string }
	h.ok(t, "git.diff", map[string]any{"target": id, "path": "st/settings.json"}, &d)
	if !strings.Contains(d.Diff, `"fullAccess":false`) {
		t.Fatalf("without the rule the state folder's diff did not show (%q): this test shows nothing", d.Diff)
	}
	h.ok(t, "git.discard", map[string]any{"target": id, "paths": []string{"st/settings.json"}}, nil)
	if got, _ := os.ReadFile(filepath.Join(dir, "st", "settings.json")); !strings.Contains(string(got), `"fullAccess":true`) {
		t.Fatalf("without the rule the discard left %q: this test shows nothing", got)
	}
	gittest.Write(t, dir, map[string]string{"st/settings.json": `{"fullAccess":false}` + "\n"})

	// The rule: every method naming the project refuses it below full.
	for _, g := range []trust.Grant{trust.View, trust.Control} {
		h, id := serve(g, false)
		for _, c := range []struct {
			method string
			params map[string]any
		}{
			{"git.status", map[string]any{"target": id}},
			{"git.diff", map[string]any{"target": id, "staged": true}},
			{"git.log", map[string]any{"target": id}},
			{"git.stage", map[string]any{"target": id, "paths": []string{"st/settings.json"}}},
			{"git.discard", map[string]any{"target": id, "paths": []string{"st/settings.json"}}},
			{"files.list", map[string]any{"target": id, "path": ""}},
		} {
			if g == trust.View && (c.method == "git.stage" || c.method == "git.discard") {
				continue // refused by scope first
			}
			h.refused(t, c.method, c.params, rpc.CodeRefused, "This project holds gatehouse's own data")
		}
	}
	// Full sees it, as the person at the computer does.
	h, id = serve(trust.Full, false)
	h.ok(t, "git.status", map[string]any{"target": id}, nil)
}

// A copy of gatehouse's state folder inside a checkout that is not the
// state folder (a backup, a dotfiles repository) is not refused whole, so
// its secret files are secrets by name: lan.json's stored secrets, gatehouse
// call's pairings and the relay identity's key. Without those rules a view
// phone read the copy of lan.json.
func TestACopyOfTheStateFolderIsSecretByName(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, map[string]string{"README.md": "hi\n"})
	files := map[string]string{
		"backup/.local/state/gatehouse/lan.json":           `{"devices":[{"id":"lan-full","stored":"U0VDUkVU"}]}`,
		"state-backup/lan (copy).json":                     `{"devices":[{"id":"lan-full","stored":"U0VDUkVU"}]}`,
		"backup/.local/state/gatehouse/lan-pairings.json":  `{"ticket":"U0VDUkVU"}`,
		"backup/.local/state/gatehouse/relay-secrets.json": `{"key":"U0VDUkVU"}`,
	}
	gittest.Write(t, dir, files)
	var without []secretfiles.Rule
	for _, r := range secretfiles.Table {
		if !strings.Contains(r.Source, "gatehouse's state folder") {
			without = append(without, r)
		}
	}
	if len(without) != len(secretfiles.Table)-2 {
		t.Fatalf("found %d rules for gatehouse's own files, want 2", len(secretfiles.Table)-len(without))
	}
	old, err := secretfiles.Compile(without)
	if err != nil {
		t.Fatal(err)
	}
	serve := func(m *secretfiles.Matcher) (*host, string) {
		h := newHostWith(t, trust.View, fsguard.Options{Home: "/nonexistent-home", StateDir: filepath.Join(t.TempDir(), "state"), Secrets: m}, rpc.HostOptions{}, dir)
		return h, h.ids[dir]
	}
	h, id := serve(old)
	for p := range files {
		if _, already := old.Match(p); already {
			continue // a generic rule already takes it (relay-secrets.json: **/*secrets*)
		}
		var r struct{ Text string }
		h.ok(t, "files.read", map[string]any{"target": id, "path": p}, &r)
		if !strings.Contains(r.Text, "U0VDUkVU") {
			t.Fatalf("without the rules %s did not read: this test shows nothing", p)
		}
	}
	h, id = serve(nil)
	for p := range files {
		h.refused(t, "files.read", map[string]any{"target": id, "path": p}, rpc.CodeRefused, "may hold secrets")
	}
}

// A worktree holds what its project tracks: a worktree of a home folder
// kept in git, made at full, showed that home's files to the phone once it
// was downgraded to control. It is refused as its project is.
func TestAWorktreeOfAHomeProjectIsServedOnlyAtFull(t *testing.T) {
	gittest.Home(t, "")
	home := gittest.Init(t, map[string]string{"notes.txt": "private notes\n"})
	serve := func(ruleOff bool) *host {
		h := newHostWith(t, trust.Full, fsguard.Options{Home: home, StateDir: filepath.Join(t.TempDir(), "state")}, rpc.HostOptions{ProjectRuleOffForTest: ruleOff}, home)
		h.switchOn.Store(true) // worktree.create at full with the switch on, as the person allowed it
		return h
	}
	for _, ruleOff := range []bool{true, false} {
		h := serve(ruleOff)
		wt, _ := newWorktree(t, h, home, map[bool]string{true: "before", false: "after"}[ruleOff])
		h.grant, _ = trust.Control, h.switchOn.Swap(false)
		params := map[string]any{"target": wt, "path": "notes.txt"}
		if ruleOff {
			var r struct{ Text string }
			h.ok(t, "files.read", params, &r)
			if r.Text != "private notes\n" {
				t.Fatalf("without the rule the worktree's notes.txt read %q: this test shows nothing", r.Text)
			}
			continue
		}
		h.refused(t, "files.read", params, rpc.CodeRefused, "This project is your home folder")
		h.refused(t, "git.status", map[string]any{"target": wt}, rpc.CodeRefused, "This project is your home folder")
	}
}
