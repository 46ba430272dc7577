package main

import (
	"fmt"

	"github.com/gatehouse/gatehouse/audit"
)

// count is n and the noun, singular for one ("1 error", "2 errors"): the
// one place the command line counts things in words.
func count(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// auditedNoun names what an audit looked at, for "Audited a bare
// repository: NAME" (the kind alone read "Audited a bare: NAME").
func auditedNoun(k audit.Kind) string {
	switch k {
	case audit.Bare:
		return "bare repository"
	case audit.Folder:
		return "folder (no repository)"
	}
	return string(k)
}
