package fsguard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/hostile"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// refusals maps the shared table's names to fsguard's refusals.
var refusals = map[string]error{"": nil, "outside": ErrOutsideRoot, "secret": ErrSecret, "hard-link": ErrHardLink,
	"git": ErrGitPath, "not-regular": ErrNotRegular, "links": ErrTooManyLinks, "invalid": ErrInvalidPath,
	"dir": ErrIsDir, "not-found": ErrNotFound, "not-dir": ErrNotDir}

func openTestRoot(t testing.TB, base string) *Root {
	t.Helper()
	r, err := OpenRoot(filepath.Join(base, "root"), Options{Home: filepath.Join(base, "home")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestHostileTrees(t *testing.T) {
	for _, c := range hostile.Cases {
		t.Run(c.Name, func(t *testing.T) {
			base := hostile.Build(t, hostile.BaseTree+c.Tree)
			if c.Leak != "" {
				if got := hostile.PlainRead(base, c.Open); !strings.Contains(got, c.Leak) {
					t.Fatalf("the attack does not reproduce: a plain read of %q gave %q, want %q", c.Open, got, c.Leak)
				}
				if c.Leak == "block" {
					// Unblock the stuck plain reader so the test can end.
					go func() {
						if f, err := os.OpenFile(filepath.Join(base, "root", c.Open), os.O_WRONLY, 0); err == nil {
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
func runEveryOperation(t *testing.T, r *Root, base string, c hostile.Case) {
	t.Helper()
	deadline := time.AfterFunc(10*time.Second, func() { panic("an fsguard operation blocked on " + c.Name) })
	defer deadline.Stop()
	before := snapshot(t, base)

	for _, g := range []trust.Grant{trust.View, trust.Control, trust.Full} {
		want := refusals[c.Want]
		if g == trust.Full {
			want = refusals[c.WantFull]
		}
		txt, err := r.ReadText(g, c.Open, 0)
		expect(t, "ReadText/"+g.String(), err, want)
		forbid(t, "ReadText/"+g.String(), g, txt.Text)

		raw, err := r.ReadFile(g, c.Open, MaxManifest)
		expect(t, "ReadFile/"+g.String(), err, want)
		forbid(t, "ReadFile/"+g.String(), g, string(raw))

		img, err := r.ReadImage(g, c.Open, "full", 0)
		if want != nil {
			expect(t, "ReadImage/"+g.String(), err, want)
		} else if err == nil {
			forbid(t, "ReadImage/"+g.String(), g, img.Data)
		}

		l, err := r.List(g, filepath.Dir(c.Open), 0)
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
			res, err := r.Grep(ctx, g, GrepQuery{Query: q}, nil)
			if err != nil {
				t.Fatalf("Grep/%v: %v", g, err)
			}
			for _, m := range res.Matches {
				forbid(t, "Grep/"+g.String()+" "+m.Path, g, m.Text)
			}
		}

		sr, err := r.Search(ctx, g, "env", nil)
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
	if c.WantFull != "" && c.WantFull != "not-found" {
		_, err := r.Write(trust.Full, c.Open, "PWNED", "")
		expect(t, "Write/full", err, refusals[c.WantFull])
	}
	if c.Want != "" && c.Want != "not-found" {
		_, err := r.Write(trust.View, c.Open, "PWNED", "")
		expect(t, "Write/view", err, refusals[c.Want])
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
	list := hostile.NeverBelowFull
	if g.SeesSecrets() {
		list = hostile.NeverAtAll
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
