package fsguard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"slices"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/trust"
)

// MaxText is the most text one read returns, and so the largest file a
// device can edit: a file is editable only when it fits one read, because
// only then does the device hold all of it and its hash.
const MaxText = 128 << 10

// binarySniff is how much of a page is searched for a NUL byte, as git and
// ripgrep do, to call a file binary.
const binarySniff = 8000

// Text is one page of a file read for a device.
type Text struct {
	Text   string `json:"text,omitempty"`
	Binary bool   `json:"binary,omitempty"`
	// Hash is the SHA-256 of the whole file, given only when the whole file
	// fit in this one read; files.write needs it as baseHash.
	Hash   string `json:"hash,omitempty"`
	Size   int64  `json:"size"`
	Offset int64  `json:"offset"`
	// Next is the offset of the next page, 0 when this page reached the end.
	Next int64 `json:"next,omitempty"`
}

// ReadText reads a page of the text file unsafePath for a device with grant
// g, starting at offset: at most MaxText bytes, cut back to a whole UTF-8
// character. Secret files are refused below full; hard-linked files, FIFOs,
// devices and anything under .git for everyone.
func (r *Root) ReadText(g trust.Grant, unsafePath string, offset int64) (Text, error) {
	a := access{op: "read", grant: g, root: true}
	if offset < 0 {
		return Text{}, pathErr(a.op, unsafePath, ErrInvalidPath)
	}
	f, st, _, err := r.openFile(a, unsafePath)
	if err != nil {
		return Text{}, err
	}
	defer f.Close()
	page, err := readPage(f, offset, MaxText, st.Size)
	if err != nil {
		return Text{}, pathErr(a.op, unsafePath, err)
	}
	t := Text{Size: st.Size, Offset: offset}
	more := len(page) > MaxText
	if more {
		page = cutToRune(page[:MaxText])
		t.Next = offset + int64(len(page))
	}
	whole := offset == 0 && !more
	if bytes.IndexByte(page[:min(len(page), binarySniff)], 0) >= 0 || !utf8.Valid(page) {
		t.Binary = true
	} else {
		t.Text = string(page)
	}
	if whole {
		t.Hash = hashOf(page)
	}
	return t, nil
}

// readPage reads up to limit+1 bytes at offset, so the caller can tell
// whether the file goes on past limit. size (from the handle's fstat) sizes
// the buffer; a file that grew since is still read to its end or limit+1.
func readPage(f *os.File, offset int64, limit int, size int64) ([]byte, error) {
	want := limit + 1
	if rest := size - offset; rest >= 0 && rest < int64(limit) {
		want = int(rest) + 1
	}
	buf := make([]byte, 0, want)
	for len(buf) <= limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), limit+1-len(buf)))
		}
		n, err := f.ReadAt(buf[len(buf):cap(buf)], offset+int64(len(buf)))
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// cutToRune drops a UTF-8 sequence cut in half at the end of a page, so the
// next page starts on a character.
func cutToRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(c) {
			if r, size := utf8.DecodeRune(b[len(b)-i:]); r == utf8.RuneError && size <= 1 {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// hashOf is the hash a device gets with a whole file and sends back as
// baseHash.
func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

const (
	// MaxRuleFile bounds a rule or instruction file read whole (AGENTS.md).
	MaxRuleFile = 2 << 20
	// MaxManifest bounds a manifest read whole (package.json).
	MaxManifest = 1 << 20
)

// ReadFile reads the whole regular file unsafePath, at most limit bytes,
// under the same rules as ReadText; a larger file is refused, never cut. It
// is for files gatehouse reads on a device's behalf to answer a method
// (manifests, rule files, icons), bounded by the caller's limit.
func (r *Root) ReadFile(g trust.Grant, unsafePath string, limit int) ([]byte, error) {
	a := access{op: "read", grant: g, root: true}
	f, st, rel, err := r.openFile(a, unsafePath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size > int64(limit) {
		return nil, pathErr(a.op, rel, ErrTooLarge)
	}
	data, err := readPage(f, 0, limit, st.Size)
	if err != nil {
		return nil, pathErr(a.op, rel, err)
	}
	if len(data) > limit {
		return nil, pathErr(a.op, rel, ErrTooLarge)
	}
	return data, nil
}
