// Package hfsname knows the code points HFS+ leaves out of a file name, so
// that ".g\u200cit" opens .git and ".e\u200cnv" opens .env on a Mac's HFS+
// disk. The list is git's own (utf8.c, next_hfs_char, written for
// CVE-2014-9390): fsguard's .git check and secretfiles' matcher read names
// as HFS+ does with it, and fsguard/hfsgit_test.go holds it to real git.
package hfsname

import "strings"

// Ignored reports whether HFS+ leaves r out of a name: the zero-width
// non-joiner and joiner, the directional marks, embeddings and overrides,
// the deprecated format characters U+206A–U+206F, and the byte order mark.
func Ignored(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
}

// Has reports whether s holds a code point HFS+ leaves out. Every one of
// them is encoded in UTF-8 from the byte 0xE2 or 0xEF, so a name without
// either is answered without decoding.
func Has(s string) bool {
	if strings.IndexByte(s, 0xe2) < 0 && strings.IndexByte(s, 0xef) < 0 {
		return false
	}
	return strings.IndexFunc(s, Ignored) >= 0
}

// Strip is s as HFS+ reads it: without the code points it leaves out.
func Strip(s string) string {
	if !Has(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if Ignored(r) {
			return -1
		}
		return r
	}, s)
}
