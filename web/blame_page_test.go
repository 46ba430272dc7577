package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/gittest"
)

// A file's blame and the whole diff (web/e2e/blame.mjs): the blame of a
// file with lines from three commits matches git blame line for line, a
// tap opens the line's commit, and the whole diff of a change of many
// files loads a page at a time as it scrolls and matches git diff.
func TestBlamePageInChromium(t *testing.T) {
	bin := browserTest(t)
	gittest.Home(t, "")
	inBrowser(t, bin, "e2e/blame.mjs", blameRepo(t), nil)
}

// blameRepo is a checkout whose story.txt has lines from three commits,
// and a long.txt of 1,200 lines, with 45 changed files, a new file and a
// new secret file in its work tree.
func blameRepo(t *testing.T) string {
	t.Helper()
	files := map[string]string{"story.txt": "Once\nthere was\na checkout\nwith four lines\n"}
	for i := range 45 {
		files[fmt.Sprintf("src/f%02d.txt", i)] = fmt.Sprintf("file %d\nunchanged\n", i)
	}
	var long strings.Builder
	for i := 1; i <= 1200; i++ {
		fmt.Fprintf(&long, "line %d of a long file\n", i)
	}
	files["long.txt"] = long.String()
	repo := gittest.Init(t, files)
	gittest.Write(t, repo, map[string]string{"story.txt": "Once\nthere were\na checkout\nwith four lines\nand a fifth\n"})
	gittest.Git(t, repo, "commit", "-qam", "The second telling")
	gittest.Write(t, repo, map[string]string{"story.txt": "Once\nthere were\na checkout\nwith six lines now\nand a fifth\nand a sixth, a long one that has to wrap on a narrow phone screen without scrolling sideways\n"})
	gittest.Git(t, repo, "commit", "-qam", "The third telling")
	changed := map[string]string{"notes/new.txt": "a new note\n", ".env": "TOKEN=secret\n"}
	for i := range 45 {
		changed[fmt.Sprintf("src/f%02d.txt", i)] = fmt.Sprintf("file %d, edited\nunchanged\nadded %d\n", i, i)
	}
	gittest.Write(t, repo, changed)
	return repo
}
