package fsguard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// baseTree is in every hostile case: an inside file, a secret, the git
// folder, and an outside folder with a private key. Every byte a device must
// never see carries a marker.
const baseTree = `
file outside/plain.txt = OUTSIDE-PLAIN-MARKER
file outside/id_rsa = OUTSIDE-KEY-MARKER
file outside/dir/plain.txt = OUTSIDE-DIR-MARKER
file root/a.txt = hello
file root/.env = SECRET-ENV-MARKER
file root/.git/config = GIT-CONFIG-MARKER
file root/src/main.go = package main
`

// markers a device below full must never read, and the ones no device may.
var (
	neverBelowFull = []string{"OUTSIDE-", "SECRET-", "GIT-CONFIG", "KEY-MARKER"}
	neverAtAll     = []string{"OUTSIDE-", "GIT-CONFIG", "KEY-MARKER"}
)

type hostileCase struct {
	name string
	tree string
	open string // the path the device sends
	// want is the refusal for a device below full; wantFull for a full
	// device (nil: the read succeeds).
	want, wantFull error
	// leak is what a plain read of the path returns: the proof that the
	// attack works without fsguard. "block" means the plain read blocks.
	leak string
}

var hostileCases = []hostileCase{
	{name: "plain file", open: "a.txt"},
	{name: "symlink in, to a plain file", tree: "symlink root/b.txt -> a.txt", open: "b.txt"},
	{name: "absolute symlink staying inside", tree: "symlink root/b.txt -> $BASE/root/a.txt", open: "b.txt"},
	{name: "symlinked folder staying inside", tree: "symlink root/lib -> src", open: "lib/main.go"},
	{name: "symlink out", tree: "symlink root/a -> ../outside/plain.txt", open: "a",
		want: ErrOutsideRoot, wantFull: ErrOutsideRoot, leak: "OUTSIDE-PLAIN-MARKER"},
	{name: "absolute symlink out", tree: "symlink root/a -> $BASE/outside/plain.txt", open: "a",
		want: ErrOutsideRoot, wantFull: ErrOutsideRoot, leak: "OUTSIDE-PLAIN-MARKER"},
	{name: "symlink out to a secret", tree: "symlink root/notes.txt -> ../outside/id_rsa", open: "notes.txt",
		want: ErrSecret, wantFull: ErrOutsideRoot, leak: "OUTSIDE-KEY-MARKER"},
	{name: "symlinked folder out", tree: "symlink root/docs -> ../outside/dir", open: "docs/plain.txt",
		want: ErrOutsideRoot, wantFull: ErrOutsideRoot, leak: "OUTSIDE-DIR-MARKER"},
	{name: "symlink to the parent", tree: "symlink root/up -> ..", open: "up/outside/plain.txt",
		want: ErrOutsideRoot, wantFull: ErrOutsideRoot, leak: "OUTSIDE-PLAIN-MARKER"},
	{name: "symlink chain out", tree: "symlink root/a -> b\nsymlink root/b -> ../outside/id_rsa", open: "a",
		want: ErrSecret, wantFull: ErrOutsideRoot, leak: "OUTSIDE-KEY-MARKER"},
	{name: "hard link to an outside key", tree: "hardlink root/b = outside/id_rsa", open: "b",
		want: ErrHardLink, wantFull: ErrHardLink, leak: "OUTSIDE-KEY-MARKER"},
	{name: "hard link named like source", tree: "hardlink root/notes.txt = outside/plain.txt", open: "notes.txt",
		want: ErrHardLink, wantFull: ErrHardLink, leak: "OUTSIDE-PLAIN-MARKER"},
	{name: "secret by name", open: ".env", want: ErrSecret, leak: "SECRET-ENV-MARKER"},
	{name: "symlink to a secret inside", tree: "symlink root/readme.txt -> .env", open: "readme.txt",
		want: ErrSecret, leak: "SECRET-ENV-MARKER"},
	{name: "secret name upper case", tree: "file root/CONFIG/.ENV.PRODUCTION = SECRET-PROD-MARKER", open: "CONFIG/.ENV.PRODUCTION",
		want: ErrSecret, leak: "SECRET-PROD-MARKER"},
	{name: ".git", open: ".git/config", want: ErrGitPath, wantFull: ErrGitPath, leak: "GIT-CONFIG-MARKER"},
	{name: ".GIT", open: ".GIT/config", want: ErrGitPath, wantFull: ErrGitPath},
	{name: ".git. (Windows)", open: ".git./config", want: ErrGitPath, wantFull: ErrGitPath},
	{name: ".git with trailing space", open: ".git /config", want: ErrGitPath, wantFull: ErrGitPath},
	{name: ".git stream", open: ".git::$INDEX_ALLOCATION/config", want: ErrGitPath, wantFull: ErrGitPath},
	{name: "git~1", open: "GIT~1/config", want: ErrGitPath, wantFull: ErrGitPath},
	{name: "symlink to .git", tree: "symlink root/g -> .git", open: "g/config",
		want: ErrGitPath, wantFull: ErrGitPath, leak: "GIT-CONFIG-MARKER"},
	{name: "symlink to .git/config", tree: "symlink root/cfg.txt -> .git/config", open: "cfg.txt",
		want: ErrGitPath, wantFull: ErrGitPath, leak: "GIT-CONFIG-MARKER"},
	{name: "FIFO named like source", tree: "fifo root/c.txt", open: "c.txt",
		want: ErrNotRegular, wantFull: ErrNotRegular, leak: "block"},
	{name: "FIFO named .gitignore", tree: "fifo root/.gitignore", open: ".gitignore",
		want: ErrNotRegular, wantFull: ErrNotRegular, leak: "block"},
	{name: "symlink to a FIFO", tree: "fifo root/p\nsymlink root/q.txt -> p", open: "q.txt",
		want: ErrNotRegular, wantFull: ErrNotRegular, leak: "block"},
	{name: "socket", tree: "socket root/s.txt", open: "s.txt", want: ErrNotRegular, wantFull: ErrNotRegular},
	{name: "device node", tree: "device root/zero.txt", open: "zero.txt", want: ErrNotRegular, wantFull: ErrNotRegular},
	{name: "symlink loop", tree: "symlink root/l1 -> l2\nsymlink root/l2 -> l1", open: "l1",
		want: ErrTooManyLinks, wantFull: ErrTooManyLinks},
	{name: "dot-dot", open: "../outside/plain.txt", want: ErrInvalidPath, wantFull: ErrInvalidPath, leak: "OUTSIDE-PLAIN-MARKER"},
	{name: "dot-dot inside", open: "src/../../outside/plain.txt", want: ErrInvalidPath, wantFull: ErrInvalidPath, leak: "OUTSIDE-PLAIN-MARKER"},
	{name: "absolute path", open: "/etc/passwd", want: ErrInvalidPath, wantFull: ErrInvalidPath},
	{name: "NUL", open: "a.txt\x00.png", want: ErrInvalidPath, wantFull: ErrInvalidPath},
	{name: "folder", open: "src", want: ErrIsDir, wantFull: ErrIsDir},
	{name: "missing", open: "nope.txt", want: ErrNotFound, wantFull: ErrNotFound},
	{name: "through a file", open: "a.txt/x", want: ErrNotDir, wantFull: ErrNotDir},
}

func openTestRoot(t testing.TB, base string) *Root {
	t.Helper()
	r, err := OpenRoot(filepath.Join(base, "root"), Options{Home: filepath.Join(base, "home")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// plainRead is what a reader without fsguard gets: os.ReadFile of the joined
// path, given a second before it is called blocked.
func plainRead(base, rel string) string {
	done := make(chan string, 1)
	go func() {
		data, err := os.ReadFile(filepath.Join(base, "root", rel))
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- string(data)
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(time.Second):
		return "block"
	}
}

func TestHostileTrees(t *testing.T) {
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			base := buildTree(t, baseTree+c.tree)
			if c.leak != "" {
				if got := plainRead(base, c.open); !strings.Contains(got, c.leak) {
					t.Fatalf("the attack does not reproduce: a plain read of %q gave %q, want %q", c.open, got, c.leak)
				}
				if c.leak == "block" {
					// Unblock the stuck plain reader so the test can end.
					go func() {
						if f, err := os.OpenFile(filepath.Join(base, "root", c.open), os.O_WRONLY, 0); err == nil {
							f.Close()
						}
					}()
				}
			}
			r := openTestRoot(t, base)
			runEveryOperation(t, r, base, c)
		})
	}
}

// runEveryOperation runs each fsguard operation on the case's tree and
// checks its outcome, and that no forbidden byte came back.
func runEveryOperation(t *testing.T, r *Root, base string, c hostileCase) {
	t.Helper()
	deadline := time.AfterFunc(10*time.Second, func() { panic("an fsguard operation blocked on " + c.name) })
	defer deadline.Stop()
	before := snapshot(t, base)

	for _, g := range []trust.Grant{trust.View, trust.Control, trust.Full} {
		want := c.want
		if g == trust.Full {
			want = c.wantFull
		}
		txt, err := r.ReadText(g, c.open, 0)
		expect(t, "ReadText/"+g.String(), err, want)
		forbid(t, "ReadText/"+g.String(), g, txt.Text)

		raw, err := r.ReadFile(g, c.open, MaxManifest)
		expect(t, "ReadFile/"+g.String(), err, want)
		forbid(t, "ReadFile/"+g.String(), g, string(raw))

		img, err := r.ReadImage(g, c.open, "full", 0)
		if want != nil {
			expect(t, "ReadImage/"+g.String(), err, want)
		} else if err == nil {
			forbid(t, "ReadImage/"+g.String(), g, img.Data)
		}

		l, err := r.List(g, filepath.Dir(c.open), 0)
		if err == nil {
			for _, e := range l.Entries {
				if IsGitName(e.Name) {
					t.Errorf("List/%v showed %q", g, e.Name)
				}
				if e.Name == ".env" && !e.Secret {
					t.Errorf("List/%v did not flag .env", g)
				}
			}
		}

		ctx := context.Background()
		for _, q := range []string{"MARKER", "marker"} {
			res, err := r.Grep(ctx, g, GrepQuery{Query: q})
			if err != nil {
				t.Fatalf("Grep/%v: %v", g, err)
			}
			for _, m := range res.Matches {
				forbid(t, "Grep/"+g.String()+" "+m.Path, g, m.Text)
			}
		}

		sr, err := r.Search(ctx, g, "env")
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		for _, p := range sr.Paths {
			if _, secret := r.Secret(p); secret && !g.SeesSecrets() {
				t.Errorf("Search/%v returned the secret %q", g, p)
			}
		}
	}

	// A full device writing through the path: the rules that hold for full
	// hold for writes, and nothing outside the root or in .git ever changes.
	// (A missing file is created by a write with no baseHash: not a refusal.)
	if c.wantFull != nil && c.wantFull != ErrNotFound {
		_, err := r.Write(trust.Full, c.open, "PWNED", "")
		expect(t, "Write/full", err, c.wantFull)
	}
	if c.want != nil && c.want != ErrNotFound {
		_, err := r.Write(trust.View, c.open, "PWNED", "")
		expect(t, "Write/view", err, c.want)
	}
	after := snapshot(t, base)
	for p, v := range before {
		if (strings.HasPrefix(p, "outside/") || strings.Contains(p, ".git/")) && after[p] != v {
			t.Errorf("%s changed: %q -> %q", p, v, after[p])
		}
	}
}

func expect(t *testing.T, op string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s: unexpected %v", op, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %v", op, err, want)
		return
	}
	if s := refusal.Sentence(err); s == refusal.InternalSentence || strings.Contains(s, "/tmp") {
		t.Errorf("%s: sentence %q", op, s)
	}
}

func forbid(t *testing.T, op string, g trust.Grant, text string) {
	t.Helper()
	list := neverBelowFull
	if g.SeesSecrets() {
		list = neverAtAll
	}
	for _, m := range list {
		if strings.Contains(text, m) {
			t.Errorf("%s returned %q", op, m)
		}
	}
}

// snapshot records every regular file's content under base.
func snapshot(t *testing.T, base string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(base, p)
		out[rel] = string(data)
		return nil
	})
	return out
}
