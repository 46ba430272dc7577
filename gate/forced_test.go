package gate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/trust"
)

// bypass is a decision that refuses nothing and overrides no filter: with
// it, a closed call has only the forced options and environment between
// the repository and the payload. Each test below shows one of them
// stopping an attack on its own, even if the allowlist were to miss it.
var bypass = &decision{}

// forcedCase proves one forced option: the call fires the payload for the
// desktop and not for a closed trust with the allowlist bypassed.
func forcedCase(t *testing.T, build func(t *testing.T, cmd string) string, c call) {
	t.Helper()
	prog, marker := gittest.PayloadFile(t)
	dir := build(t, prog)
	_, _ = open(t, dir).run(ctx, desktop, openDecision, c)
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: the desktop call did not run the payload")
	}
	prog, marker = gittest.PayloadFile(t)
	dir = build(t, prog)
	_, _ = open(t, dir).run(ctx, closed, bypass, c)
	if gittest.Fired(marker) {
		t.Fatal("the forced options did not stop the payload")
	}
}

func TestForcedHooksPath(t *testing.T) {
	gittest.Home(t, "")
	forcedCase(t, func(t *testing.T, cmd string) string {
		d := withStaged(t)
		if err := os.WriteFile(filepath.Join(d, ".git/hooks/pre-commit"), []byte("#!/bin/sh\nexec '"+cmd+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}, call{sub: subCommit, opts: []string{"-q", "-m", "m"}}) // no --no-verify: the option alone
}

func TestForcedFsmonitor(t *testing.T) {
	gittest.Home(t, "")
	forcedCase(t, func(t *testing.T, cmd string) string { return repoWith(t, nil, "core.fsmonitor", cmd) },
		call{sub: subStatus, opts: []string{"--porcelain=v2"}})
}

func TestForcedProtocolExt(t *testing.T) {
	gittest.Home(t, "")
	forcedCase(t, func(t *testing.T, cmd string) string {
		return repoWith(t, nil, "remote.origin.url", "ext::"+cmd+" %S", "protocol.ext.allow", "always", "protocol.allow", "always")
	}, call{sub: subFetch, opts: []string{"-q", "origin"}})
}

func TestForcedProtocolFile(t *testing.T) {
	gittest.Home(t, "")
	forcedCase(t, func(t *testing.T, cmd string) string {
		b := filepath.Join(t.TempDir(), "remote.git")
		git(t, "", "init", "-q", "--bare", b)
		if err := os.WriteFile(filepath.Join(b, "hooks", "pre-receive"), []byte("#!/bin/sh\nexec '"+cmd+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return repoWith(t, nil, "remote.origin.url", b, "protocol.file.allow", "always")
	}, call{sub: subPush, opts: []string{"-q", "origin", "HEAD:refs/heads/main"}})
}

// partialClone is a blob-less clone whose origin then points at url: any
// read of a file's content fetches it lazily, through whatever program the
// config names (docs/gate-rules.md, "Programs that run for the network").
func partialClone(t *testing.T, url string, config ...string) string {
	t.Helper()
	src := gittest.Init(t, map[string]string{"big.txt": "content fetched lazily\n"})
	git(t, src, "config", "uploadpack.allowFilter", "true")
	dir := filepath.Join(t.TempDir(), "client")
	git(t, "", "clone", "-q", "--filter=blob:none", "--no-checkout", "file://"+src, dir)
	git(t, dir, "config", "remote.origin.url", url)
	for i := 0; i+1 < len(config); i += 2 {
		git(t, dir, "config", config[i], config[i+1])
	}
	return dir
}

func TestLazyFetchThroughSSHCommandIsRefused(t *testing.T) {
	runAttacks(t, []attack{{
		name: "core.sshCommand in a partial clone",
		build: func(t *testing.T, cmd string) string {
			return partialClone(t, "ssh://example.invalid/repo.git", "core.sshCommand", cmd)
		},
		op:   func(r *Repo, tr trust.Trust) error { _, err := r.Show(ctx, tr, trust.Full, headOf(r), ""); return err },
		want: ErrRefused,
	}})
}

// The credential helper is cleared for calls that need no network, so even
// a lazy fetch inside a read (had the partial-clone refusal missed it) never
// runs the checkout's helper.
func TestForcedCredentialHelperEmpty(t *testing.T) {
	gittest.Home(t, "")
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer server.Close()
	forcedCase(t, func(t *testing.T, cmd string) string {
		return partialClone(t, server.URL+"/repo.git", "credential.helper", cmd)
	}, call{sub: subShow, opts: []string{"--no-color"}, args: []string{"HEAD:big.txt"}})
}

// A commit runs auto maintenance, which runs gc (and any pre-auto-gc hook a
// config names) once git finds the repository untidy: more packs than
// gc.autoPackLimit, or more loose objects than gc.auto (builtin/gc.c,
// need_to_gc). Two packs over a limit of 1 are the cheap way to make it
// untidy: the pack count is exact, where the loose objects are estimated
// from one folder of 256 and took 3,000 objects to be sure of. The desktop
// commit consolidates the packs; the closed one (maintenance.auto=false,
// gc.auto=0) leaves both.
func TestForcedMaintenanceOff(t *testing.T) {
	gittest.Home(t, "[gc]\n\tautoPackLimit = 1\n\tautoDetach = false\n")
	packs := func(dir string) int {
		found, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
		if err != nil {
			t.Fatal(err)
		}
		return len(found)
	}
	build := func() string {
		dir := withStaged(t)
		git(t, dir, "repack", "-d", "-q") // the commit and the staged blob
		write(t, dir, map[string]string{"b.txt": "b\n"})
		git(t, dir, "add", "b.txt")
		git(t, dir, "repack", "-d", "-q") // b.txt's blob
		if n := packs(dir); n != 2 {
			t.Fatalf("built %d packs, want 2", n)
		}
		return dir
	}
	dir := build()
	_, _ = open(t, dir).run(ctx, desktop, openDecision, call{sub: subCommit, opts: []string{"-q", "-m", "m"}})
	if n := packs(dir); n != 1 {
		t.Fatalf("not reproduced: auto gc did not run after the desktop commit (2 packs -> %d)", n)
	}
	dir = build()
	if _, err := open(t, dir).run(ctx, closed, bypass, call{sub: subCommit, opts: []string{"-q", "-m", "m"}}); err != nil {
		t.Fatal(err)
	}
	if n := packs(dir); n != 2 {
		t.Fatalf("auto gc ran after a closed commit (2 packs -> %d)", n)
	}
}

// A commit carrying a signature makes log run the signature program when
// log.showSignature is on.
func TestForcedShowSignatureOff(t *testing.T) {
	prog, marker := gittest.PayloadFile(t)
	gittest.Home(t, "[gpg]\n\tprogram = "+prog+"\n")
	dir := repoWith(t, nil, "log.showSignature", "true")
	tree := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}"))
	commit := "tree " + tree + "\nauthor A <a@b> 1700000000 +0000\ncommitter A <a@b> 1700000000 +0000\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
	cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(commit)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-ref", "refs/heads/main", strings.TrimSpace(string(out)))
	git(t, dir, "log", "-1")
	if !gittest.Fired(marker) {
		t.Fatal("not reproduced: plain git log did not run the signature program")
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []trust.Trust{closed, desktop} {
		if _, err := open(t, dir).Log(ctx, tr, LogOptions{Limit: 5}); err != nil {
			t.Fatal(err)
		}
		if gittest.Fired(marker) {
			t.Fatalf("%v: log ran the signature program", tr)
		}
	}
}

// A FIFO named .mailmap hangs git log, which reads it by default.
func TestMailmapIsNeverRead(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	if err := mkfifo(filepath.Join(dir, ".mailmap")); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	plain := exec.CommandContext(c, "git", "log", "-1")
	plain.Dir = dir
	if err := plain.Run(); c.Err() == nil {
		t.Fatalf("not reproduced: plain git log did not block on .mailmap (%v)", err)
	}
	start := time.Now()
	if _, err := open(t, dir).Log(ctx, closed, LogOptions{Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("log waited on .mailmap")
	}
}

func TestEnvironmentIsAnAllowlist(t *testing.T) {
	gittest.Home(t, "")
	t.Setenv("GIT_SSH_COMMAND", "evil")
	t.Setenv("GIT_EXTERNAL_DIFF", "evil")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='x'")
	t.Setenv("PAGER", "evil")
	t.Setenv("EDITOR", "evil")
	t.Setenv("SSH_AUTH_SOCK", "/agent")
	r := open(t, gittest.Init(t, nil))
	for _, s := range []sub{subStatus, subPush} {
		env := strings.Join(r.environ(closed, s), "\n")
		for _, bad := range []string{"GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_CONFIG_PARAMETERS", "PAGER=", "EDITOR=evil"} {
			if strings.Contains(env, bad) {
				t.Errorf("%s: %s inherited", s.name, bad)
			}
		}
		if agent := strings.Contains(env, "SSH_AUTH_SOCK"); agent != s.network {
			t.Errorf("%s: SSH agent passed %v", s.name, agent)
		}
		for _, want := range []string{"GIT_DIR=", "GIT_WORK_TREE=", "GIT_COMMON_DIR=", "GIT_CEILING_DIRECTORIES=", "GIT_ALLOW_PROTOCOL=https:http:ssh:git", "GIT_LITERAL_PATHSPECS=1"} {
			if !strings.Contains(env, want) {
				t.Errorf("%s: %s missing", s.name, want)
			}
		}
	}
	argv := strings.Join(r.argv(closed, bypass, call{sub: subPush}), " ")
	if strings.Contains(argv, "credential.helper=") {
		t.Error("a push clears the user's own credential helper")
	}
	argv = strings.Join(r.argv(closed, bypass, call{sub: subStatus}), " ")
	for _, want := range []string{"credential.helper=", "core.askPass=", "safe.bareRepository=explicit", "core.hooksPath=/dev/null"} {
		if !strings.Contains(argv, want) {
			t.Errorf("status argv lacks %s", want)
		}
	}
}

func TestDecisionCache(t *testing.T) {
	gittest.Home(t, "")
	dir := gittest.Init(t, nil)
	r := open(t, dir)
	time.Sleep(2 * racyWindow) // a config written this instant is listed again until it is not (racy)
	if _, err := r.decide(ctx, closed, readGate, "x"); err != nil {
		t.Fatal(err)
	}
	n := r.started.Load()
	for range 10 {
		if _, err := r.decide(ctx, closed, changeGate, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if r.started.Load() != n {
		t.Fatalf("cached decisions started %d git processes", r.started.Load()-n)
	}
	// A config change is seen at once: the repository's config listed, then
	// (it includes nothing) the whole configuration with the user's drivers.
	git(t, dir, "config", "core.editor", "vim")
	_, err := r.decide(ctx, closed, changeGate, "commit")
	wantRefusal(t, err, ErrRefused, "core.editor")
	if r.started.Load() != n+2 {
		t.Fatalf("a changed config took %d processes, want 2", r.started.Load()-n)
	}
	// A .gitmodules that arrived (a pull) refuses the next change.
	git(t, dir, "config", "--unset", "core.editor")
	write(t, dir, map[string]string{".gitmodules": "[submodule \"s\"]\n\tpath = s\n\turl = https://github.com/a/b\n"})
	_, err = r.decide(ctx, closed, changeGate, "commit")
	wantRefusal(t, err, ErrSubmodules)
	// A config too large to list refuses.
	big := strings.Repeat("[user]\n\tname = "+strings.Repeat("x", 1000)+"\n", 1100)
	write(t, dir, map[string]string{".git/config": read(t, filepath.Join(dir, ".git/config")) + big})
	_, err = open(t, dir).decide(ctx, closed, readGate, "see its status")
	wantRefusal(t, err, ErrConfigTooLarge)
}
