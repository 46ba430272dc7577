// Package display makes text that another party chose safe to print on a
// terminal: a relay's account name, a device's name and platform, a
// sentence a host answered with. Such text is untrusted: escape sequences
// in it could repaint the screen, retitle the window or fake a prompt, and a
// newline could forge a line of output. Every such string goes through
// Text before it reaches a terminal.
package display

import (
	"strconv"
	"unicode"
)

// maxText bounds what is shown of one string: a name is short, and a
// megabyte "name" would flood the terminal.
const maxText = 512

// Text returns s unchanged when it is printable text (no control
// characters, no tab, no newline, no invalid UTF-8), and otherwise as Go
// would quote it, without the quotes: ESC becomes \x1b and a newline \n,
// so nothing reaches the terminal that it would act on. Longer text is cut
// at maxText runes and ends with "...".
func Text(s string) string {
	cut := false
	if n := 0; len(s) > maxText {
		for i := range s {
			if n == maxText {
				s, cut = s[:i], true
				break
			}
			n++
		}
	}
	for _, r := range s {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) || r == '\t' {
			q := strconv.Quote(s)
			s = q[1 : len(q)-1]
			break
		}
	}
	if cut {
		s += "..."
	}
	return s
}
