package fsguard

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/gatehouse/gatehouse/internal/hostile"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

func TestReadTextPagesAndHash(t *testing.T) {
	big := strings.Repeat("é", MaxText/2+10) // 2-byte characters across the page edge
	base := hostile.Build(t, "file root/small.txt = hi\nfile root/bin.dat = a\x00b")
	if err := os.WriteFile(filepath.Join(base, "root/big.txt"), []byte("x"+big), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openTestRoot(t, base)

	small, err := r.ReadText(trust.View, "small.txt", 0)
	if err != nil || small.Text != "hi" || small.Hash != hashOf([]byte("hi")) || small.Next != 0 {
		t.Fatalf("small: %+v %v", small, err)
	}
	bin, _ := r.ReadText(trust.View, "bin.dat", 0)
	if !bin.Binary || bin.Text != "" {
		t.Fatalf("binary file read as text: %+v", bin)
	}

	var got strings.Builder
	offset := int64(0)
	for pages := 0; ; pages++ {
		p, err := r.ReadText(trust.View, "big.txt", offset)
		if err != nil {
			t.Fatal(err)
		}
		if p.Hash != "" {
			t.Fatal("a file larger than one read got a hash, so it could be edited")
		}
		if p.Binary {
			t.Fatalf("page at %d cut a character in half", offset)
		}
		got.WriteString(p.Text)
		if p.Next == 0 {
			break
		}
		if pages > 3 {
			t.Fatal("too many pages")
		}
		offset = p.Next
	}
	if got.String() != "x"+big {
		t.Fatal("pages do not add up to the file")
	}
	if data, err := r.ReadFile(trust.View, "small.txt", 2); err != nil || string(data) != "hi" {
		t.Fatalf("ReadFile at its limit: %q %v", data, err)
	}
	if _, err := r.ReadFile(trust.View, "small.txt", 1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadFile over its limit: %v", err)
	}
	if _, err := r.ReadText(trust.View, "small.txt", -1); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("negative offset: %v", err)
	}
}

func TestListSortsFlagsAndPages(t *testing.T) {
	var spec strings.Builder
	spec.WriteString("file root/.env = x\nfile root/b.txt = 12345\ndir root/a-dir\nsymlink root/link -> .env\nfile root/.git/HEAD = x\nfifo root/pipe\n")
	for i := range ListPage + 5 {
		fmt.Fprintf(&spec, "file root/many/f%04d = x\n", i)
	}
	r := openTestRoot(t, hostile.Build(t, spec.String()))
	l, err := r.List(trust.View, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range l.Entries {
		names = append(names, fmt.Sprintf("%s:%s:%v", e.Name, e.Kind, e.Secret))
	}
	want := "a-dir:dir:false many:dir:false .env:file:true b.txt:file:false link:symlink:true pipe:other:false"
	if strings.Join(names, " ") != want {
		t.Fatalf("listing\n got %s\nwant %s", strings.Join(names, " "), want)
	}
	if l.Entries[3].Size != 5 {
		t.Fatalf("size %d", l.Entries[3].Size)
	}
	p1, _ := r.List(trust.View, "many", 0)
	p2, _ := r.List(trust.View, "many", p1.Next)
	if len(p1.Entries) != ListPage || p1.Next != ListPage || len(p2.Entries) != 5 || p2.Next != 0 {
		t.Fatalf("paging: %d next %d, then %d next %d", len(p1.Entries), p1.Next, len(p2.Entries), p2.Next)
	}
	// A secret folder may be listed (names only); its files stay closed.
	r2 := openTestRoot(t, hostile.Build(t, "file root/.ssh/id_ed25519 = KEY"))
	l2, err := r2.List(trust.View, ".ssh", 0)
	if err != nil || len(l2.Entries) != 1 || !l2.Entries[0].Secret {
		t.Fatalf("listing .ssh: %+v %v", l2, err)
	}
	if _, err := r2.ReadText(trust.View, ".ssh/id_ed25519", 0); !errors.Is(err, ErrSecret) {
		t.Fatalf("reading .ssh/id_ed25519: %v", err)
	}
}

func TestSearch(t *testing.T) {
	r := openTestRoot(t, hostile.Build(t, `
file root/src/envelope.go = x
file root/envoy/readme = x
file root/.env = x
file root/config/.env.local = x
symlink root/env-link -> .env
file root/.git/env-in-git = x
`))
	ctx := context.Background()
	if _, err := r.Search(ctx, trust.View, "e", nil); !errors.Is(err, ErrShortQuery) {
		t.Fatalf("one letter: %v", err)
	}
	view, _ := r.Search(ctx, trust.View, "ENV", nil)
	full, _ := r.Search(ctx, trust.Full, "env", nil)
	if got := strings.Join(view.Paths, " "); got != "envoy/ src/envelope.go" {
		t.Fatalf("view search: %s", got)
	}
	if got := strings.Join(full.Paths, " "); got != ".env config/.env.local env-link envoy/ src/envelope.go" {
		t.Fatalf("full search: %s", got)
	}
}

func TestSearchStopsAtItsBound(t *testing.T) {
	var spec strings.Builder
	for i := range MaxSearchResults + 20 {
		fmt.Fprintf(&spec, "file root/d%d/match%d.txt = x\n", i%7, i)
	}
	r := openTestRoot(t, hostile.Build(t, spec.String()))
	res, err := r.Search(context.Background(), trust.View, "match", nil)
	if err != nil || !res.Truncated || len(res.Paths) != MaxSearchResults {
		t.Fatalf("got %d paths, truncated %v, err %v", len(res.Paths), res.Truncated, err)
	}
}

func TestGrepOptions(t *testing.T) {
	r := openTestRoot(t, hostile.Build(t, `
file root/a.go = func Foo() {}
file root/b.go = // foobar and FOO
file root/c.txt = the fool
file root/.env = FOO=secret
file root/.git/config = foo in git
fifo root/foo.txt
file root/outside-key = FOO key
hardlink root/linked.txt = root/outside-key
`+"file root/d.bin = Foo\x00binary\n"))
	ctx := context.Background()
	grep := func(g trust.Grant, q GrepQuery) string {
		t.Helper()
		res, err := r.Grep(ctx, g, q, nil)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		var out []string
		for _, m := range res.Matches {
			out = append(out, fmt.Sprintf("%s:%d", m.Path, m.Line))
		}
		return strings.Join(out, " ")
	}
	// The hard link makes both names refused, as both are links of one file.
	for _, c := range []struct {
		g    trust.Grant
		q    GrepQuery
		want string
	}{
		{trust.View, GrepQuery{Query: "foo"}, "a.go:1 b.go:1 c.txt:1"},
		{trust.View, GrepQuery{Query: "Foo", MatchCase: true}, "a.go:1"},
		{trust.View, GrepQuery{Query: "foo", WholeWord: true}, "a.go:1 b.go:1"},
		{trust.View, GrepQuery{Query: `f[o]+l\b`, Regex: true}, "c.txt:1"},
		{trust.View, GrepQuery{Query: `FOO`, Regex: true, MatchCase: true}, "b.go:1"},
		{trust.Full, GrepQuery{Query: "FOO", MatchCase: true}, ".env:1 b.go:1"},
	} {
		if got := grep(c.g, c.q); got != c.want {
			t.Errorf("%v %+v: got %q, want %q", c.g, c.q, got, c.want)
		}
	}
	if _, err := r.Grep(ctx, trust.View, GrepQuery{Query: "a(b", Regex: true}, nil); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("bad regex: %v", err)
	}
	if _, err := r.Grep(ctx, trust.View, GrepQuery{Query: strings.Repeat("a", MaxQuery+1)}, nil); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("long query: %v", err)
	}
}

func TestGrepLinesAndBounds(t *testing.T) {
	var many strings.Builder
	for i := range MaxGrepMatches + 10 {
		fmt.Fprintf(&many, "line %d needle\n", i)
	}
	base := hostile.Build(t, "file root/x.txt = one\\ntwo needle\\nthree\n")
	if err := os.WriteFile(filepath.Join(base, "root/x.txt"), []byte("one\ntwo needle\nthree needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "root/many.txt"), []byte(many.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 5000) + "needle" + strings.Repeat("b", 5000)
	if err := os.WriteFile(filepath.Join(base, "root/long.txt"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openTestRoot(t, base)
	res, err := r.Grep(context.Background(), trust.View, GrepQuery{Query: "needle"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Matches) != MaxGrepMatches {
		t.Fatalf("%d matches, truncated %v", len(res.Matches), res.Truncated)
	}
	for _, m := range res.Matches {
		if len(m.Text) > maxLineText {
			t.Fatalf("line text of %d bytes", len(m.Text))
		}
		if m.Path == "long.txt" && !strings.Contains(m.Text, "needle") {
			t.Fatal("the cut line lost its match")
		}
		if m.Path == "x.txt" && (m.Line != 2 && m.Line != 3) {
			t.Fatalf("x.txt line %d", m.Line)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, _ = r.Grep(ctx, trust.View, GrepQuery{Query: "needle"}, nil)
	if !res.Truncated {
		t.Fatal("a grep whose context ended did not say truncated")
	}
}

func TestWrite(t *testing.T) {
	base := hostile.Build(t, "file root/a.txt = old\nfile root/big.txt = x\nsymlink root/alias.txt -> a.txt\ndir root/real\nsymlink root/docs -> real")
	if err := os.Chmod(filepath.Join(base, "root/a.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "root/big.txt"), make([]byte, MaxText+1), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openTestRoot(t, base)
	read := func(rel string) string {
		data, _ := os.ReadFile(filepath.Join(base, "root", rel))
		return string(data)
	}
	old, _ := r.ReadText(trust.Full, "a.txt", 0)

	h, err := r.Write(trust.Full, "a.txt", "new", old.Hash)
	if err != nil || h != hashOf([]byte("new")) || read("a.txt") != "new" {
		t.Fatalf("write: %v, file %q", err, read("a.txt"))
	}
	if st, _ := os.Stat(filepath.Join(base, "root/a.txt")); st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v not kept", st.Mode().Perm())
	}
	// The first save landed but its reply was lost: the retry succeeds.
	if h2, err := r.Write(trust.Full, "a.txt", "new", old.Hash); err != nil || h2 != h {
		t.Fatalf("retried save: %v", err)
	}
	// Someone else changed it: a conflict, and their text stays.
	if err := os.WriteFile(filepath.Join(base, "root/a.txt"), []byte("theirs"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Write(trust.Full, "a.txt", "mine", h); !errors.Is(err, ErrConflict) || read("a.txt") != "theirs" {
		t.Fatalf("conflict: %v, file %q", err, read("a.txt"))
	}
	if _, err := r.Write(trust.Full, "new.txt", "fresh", ""); err != nil || read("new.txt") != "fresh" {
		t.Fatalf("create: %v", err)
	}
	if _, err := r.Write(trust.Full, "new.txt", "again", ""); !errors.Is(err, ErrExists) {
		t.Fatalf("create over an existing file: %v", err)
	}
	if _, err := r.Write(trust.Full, "gone.txt", "x", h); !errors.Is(err, ErrConflict) {
		t.Fatalf("edit of a deleted file: %v", err)
	}
	if _, err := r.Write(trust.Full, "big.txt", "x", "whatever"); !errors.Is(err, ErrTooLargeToEdit) {
		t.Fatalf("large file: %v", err)
	}
	if _, err := r.Write(trust.Full, "a.txt", strings.Repeat("x", MaxText+1), ""); !errors.Is(err, ErrTextTooLarge) {
		t.Fatalf("large text: %v", err)
	}
	// Through a symlink the target is written and the link stays a link.
	theirs, _ := r.ReadText(trust.Full, "alias.txt", 0)
	if _, err := r.Write(trust.Full, "alias.txt", "via link", theirs.Hash); err != nil || read("a.txt") != "via link" {
		t.Fatalf("write through a link: %v", err)
	}
	if fi, _ := os.Lstat(filepath.Join(base, "root/alias.txt")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if _, err := r.Write(trust.Full, "docs/n.md", "in a linked folder", ""); err != nil || read("real/n.md") != "in a linked folder" {
		t.Fatalf("new file in a symlinked folder: %v", err)
	}
	if _, err := r.Write(trust.View, ".env", "x", ""); !errors.Is(err, ErrSecret) {
		t.Fatalf("secret below full: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(base, "root"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".gatehouse-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func TestImages(t *testing.T) {
	base := hostile.Build(t, "file root/not.png = hello")
	img := image.NewRGBA(image.Rect(0, 0, 1200, 800))
	for y := range 800 {
		for x := range 1200 {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "root/pic.png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// A PNG whose header claims 50,000 × 50,000 pixels: never decoded.
	bomb := pngHeader(50_000, 50_000)
	if err := os.WriteFile(filepath.Join(base, "root/bomb.png"), bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openTestRoot(t, base)

	var whole []byte
	for off := int64(0); ; {
		c, err := r.ReadImage(trust.View, "pic.png", "full", off)
		if err != nil || c.Mime != "image/png" {
			t.Fatalf("full: %v %s", err, c.Mime)
		}
		part, _ := base64.StdEncoding.DecodeString(c.Data)
		whole = append(whole, part...)
		if c.Done {
			break
		}
		off = c.Offset + int64(len(part))
	}
	if !bytes.Equal(whole, buf.Bytes()) {
		t.Fatal("chunks do not add up to the image")
	}
	th, err := r.ReadImage(trust.View, "pic.png", "thumb", 0)
	if err != nil || !th.Done {
		t.Fatalf("thumb: %v", err)
	}
	data, _ := base64.StdEncoding.DecodeString(th.Data)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != thumbEdge || cfg.Height != thumbEdge*800/1200 {
		t.Fatalf("thumb is %dx%d (%v)", cfg.Width, cfg.Height, err)
	}
	if _, err := r.ReadImage(trust.View, "bomb.png", "thumb", 0); !errors.Is(err, ErrImageTooLarge) {
		t.Fatalf("bomb: %v", err)
	}
	if _, err := r.ReadImage(trust.View, "not.png", "full", 0); !errors.Is(err, ErrNotImage) {
		t.Fatalf("text as image: %v", err)
	}
}

// pngHeader is a PNG signature and IHDR chunk claiming w × h pixels.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	_ = png.Encode(&b, img)
	out := b.Bytes()
	// IHDR width and height sit at bytes 16..23; fix the CRC too.
	be := func(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
	copy(out[16:], be(w))
	copy(out[20:], be(h))
	crc := crc32IEEE(out[12:29])
	copy(out[29:], be(crc))
	return out
}

func TestHomeAndAppDataRoots(t *testing.T) {
	base := hostile.Build(t, `
file home/notes.txt = hi
file home/code/app/main.go = x
file home/.local/state/gatehouse/settings.json = {}
file home/.config/gatehouse/settings.json = {}
symlink homelink -> home
`)
	home := filepath.Join(base, "home")
	state := filepath.Join(home, ".local/state/gatehouse")
	config := filepath.Join(home, ".config/gatehouse")
	for _, c := range []struct {
		dir  string
		want error
	}{
		{"home", ErrHomeRoot},
		{"homelink", ErrHomeRoot}, // compared canonicalized too
		{".", ErrHomeRoot},        // an ancestor of home
		{"home/.local", ErrAppDataRoot},
		{"home/.local/state/gatehouse", ErrAppDataRoot},
		{"home/.config", ErrAppDataRoot}, // holds the config folder, whose settings.json sets a phone's walls
		{"home/.config/gatehouse", ErrAppDataRoot},
		{"home/code/app", nil},
	} {
		r, err := OpenRoot(filepath.Join(base, c.dir), Options{Home: home, StateDir: state, ConfigDir: config})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []trust.Grant{trust.View, trust.Control} {
			_, err := r.List(g, "", 0)
			if !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
				t.Errorf("%s as %v: %v, want %v", c.dir, g, err, c.want)
			}
			if _, err := r.Grep(context.Background(), g, GrepQuery{Query: "hi"}, nil); c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("grep in %s: %v", c.dir, err)
			}
		}
		if _, err := r.List(trust.Full, "", 0); err != nil {
			t.Errorf("%s as full: %v", c.dir, err)
		}
		r.Close()
	}
	// The attack the rule stops: a view device reading a home-rooted project
	// sees the whole home folder, shell history included.
	if plain, _ := os.ReadFile(filepath.Join(home, "notes.txt")); string(plain) != "hi" {
		t.Fatal("fixture")
	}
	// Without ConfigDir (before the config folder was split from the state
	// folder) a control device serving ~/.config could rewrite gatehouse's
	// settings.json, its own memory bound among them.
	r, err := OpenRoot(filepath.Join(base, "home/.config"), Options{Home: home, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.List(trust.Control, "gatehouse", 0); err != nil {
		t.Fatalf("not reproduced: without ConfigDir ~/.config/gatehouse was refused: %v", err)
	}
}

// Serving ~/.aws must not make ~/.aws/credentials a harmless "credentials".
func TestSecretsSeenFromHome(t *testing.T) {
	// ~/.kube/config holds cluster credentials; a file named "config" alone
	// is not secret, so only the path relative to home can tell.
	base := hostile.Build(t, "file home/.kube/config = users:\\n- user: {token: KEY-MARKER}")
	r, err := OpenRoot(filepath.Join(base, "home/.kube"), Options{Home: filepath.Join(base, "home")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.ReadText(trust.View, "config", 0); !errors.Is(err, ErrSecret) {
		t.Fatalf("~/.kube/config read from a checkout at ~/.kube: %v", err)
	}
	other, err := OpenRoot(filepath.Join(base, "home/.kube"), Options{Home: filepath.Join(base, "elsewhere")})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ReadText(trust.View, "config", 0); err != nil {
		t.Fatalf("without the home rule the name alone is not secret, so the attack would work: %v", err)
	}
}

func TestHazards(t *testing.T) {
	base := hostile.Build(t, `
file outside/id_rsa = KEY
file outside/x = x
file root/ok.txt = x
file root/.env = x
file root/.git/config = x
file root/sub/.git/HEAD = x
file root/.GIT/x = x
file root/git~1 = x
hardlink root/linked = outside/x
fifo root/pipe.txt
symlink root/out -> ../outside/x
symlink root/key -> ../outside/id_rsa
symlink root/g -> .git
symlink root/cfg -> .env
symlink root/l1 -> l2
symlink root/l2 -> l1
file root/-rf = x
`)
	if err := os.WriteFile(filepath.Join(base, "root", "bad\x01name"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := openTestRoot(t, base)
	found, truncated := r.Hazards(context.Background())
	if truncated {
		t.Fatal("truncated")
	}
	var got []string
	for _, h := range found {
		got = append(got, string(h.Kind)+" "+h.Path)
	}
	want := []string{
		"leading-dash -rf", "git-lookalike .GIT", "control-char bad\x01name", "symlink-secret cfg",
		"symlink-git g", "git-lookalike git~1", "symlink-outside key", "symlink-secret key",
		"symlink-loop l1", "symlink-loop l2", "hard-link linked", "symlink-outside out",
		"special-file pipe.txt", "nested-git sub/.git",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("hazards\n got %q\nwant %q", got, want)
	}
}

func TestErrorsNeverCarryLocalPaths(t *testing.T) {
	base := hostile.Build(t, hostile.BaseTree+"symlink root/out -> ../outside/plain.txt")
	r := openTestRoot(t, base)
	for _, p := range []string{"out", "nope", ".git/config", "../x", ".env", "src"} {
		_, err := r.ReadText(trust.View, p, 0)
		if err == nil {
			t.Fatalf("%s: no error", p)
		}
		for _, text := range []string{err.Error(), refusal.Sentence(err)} {
			if strings.Contains(text, base) {
				t.Errorf("%s: %q holds a local path", p, text)
			}
		}
	}
}

func TestOperationsNeverBlockOnFIFOs(t *testing.T) {
	r := openTestRoot(t, hostile.Build(t, "fifo root/a.txt\nfifo root/.gitignore\nfifo root/sub/package.json\nfile root/b.txt = needle"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.ReadText(trust.Full, "a.txt", 0)
		_, _ = r.ReadImage(trust.Full, "a.txt", "full", 0)
		_, _ = r.List(trust.Full, "", 0)
		_, _ = r.Search(context.Background(), trust.Full, "json", nil)
		_, _ = r.Grep(context.Background(), trust.Full, GrepQuery{Query: "needle"}, nil)
		_, _ = r.Write(trust.Full, "a.txt", "x", "")
		_, _ = r.Hazards(context.Background())
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("an operation blocked on a FIFO")
	}
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
