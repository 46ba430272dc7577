package audit

import (
	"bytes"
	"path"
	"strings"
)

// A broad secret rule (secretfiles.Rule.Broad: *secrets*, *api_key*,
// *-password) matches a word anywhere in a name, so it also matches files
// nobody meant as secrets: gitleaks keeps a test repository's git folder as
// plain files, and its branch remove-secrets is two tracked files,
// dotGit/refs/heads/remove-secrets and dotGit/logs/refs/heads/remove-secrets.
// For such a rule the audit reads the blob and lowers the finding to a note
// only for content that cannot be a secret: nothing at all, or exactly what
// git itself writes in a ref or reflog file, in a file placed where git
// keeps those. Everything else stays an error; this is not a secret
// scanner.

// judgeBroad says whether the blob of a file a broad rule matched holds
// something that cannot be a secret (contentInert, with what it holds) or
// may (contentUnknown: the name decides).
func judgeBroad(name string, data []byte, truncated bool) (content, string) {
	if truncated {
		return contentUnknown, ""
	}
	if len(data) == 0 {
		return contentInert, "an empty file"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return contentInert, "only blank space"
	}
	switch refFolder(name) {
	case "refs":
		return looseRef(data)
	case "logs":
		return reflog(data)
	}
	return contentUnknown, ""
}

// refFolder says where in a git folder's layout name sits: "refs" for a
// file below a refs/ folder, "logs" for one below logs/refs/, "" for
// neither (gitrepository-layout(5)). The place matters: forty hex digits
// are an object id in refs/heads/x, but also the shape of a GitHub token
// from before 2021 or of many API keys in a file named api_key.
func refFolder(name string) string {
	dirs := strings.Split(path.Dir(name), "/")
	for i, d := range dirs {
		if d == "refs" {
			if i > 0 && dirs[i-1] == "logs" {
				return "logs"
			}
			return "refs"
		}
	}
	return ""
}

// looseRef accepts what git writes in a loose ref file (refs/files-backend.c,
// write_ref_to_lockfile and create_symref_lock): one object id, or
// "ref: " and a ref name, and a newline. git itself reads more (anything
// after white space following the id); the audit takes only what git
// writes.
func looseRef(data []byte) (content, string) {
	line, ok := oneLine(data)
	switch {
	case !ok:
	case objectID(line):
		return contentInert, "a git ref (one object id, as git writes in a file under refs/)"
	case strings.HasPrefix(line, "ref: refs/") && refName(line[len("ref: "):]):
		return contentInert, "a git symbolic ref (ref: refs/…, as git writes in a file under refs/)"
	}
	return contentUnknown, ""
}

// oneLine is data's only line, without its newline.
func oneLine(data []byte) (string, bool) {
	s := strings.TrimSuffix(string(data), "\n")
	return s, !strings.ContainsAny(s, "\n\r")
}

// objectID is a full SHA-1 or SHA-256 object id in the lower-case hex git
// writes.
func objectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// refName refuses the bytes git never allows in a ref name (refs.c,
// refname_disposition: control characters, space, ~ ^ : ? * [ \ and DEL).
func refName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f || strings.IndexByte("~^:?*[\\", c) >= 0 {
			return false
		}
	}
	return s != ""
}

// reflog accepts a file of reflog entries only (refs/files-backend.c,
// show_one_reflog_ent: "old SP new SP name <email> SP time SP tz TAB
// message"). The message is a commit's subject or git's own words; one
// that names a URL is left to the name ("clone: from <url>" carries the
// URL it was given, and a URL can carry a password).
func reflog(data []byte) (content, string) {
	if data[len(data)-1] != '\n' {
		return contentUnknown, ""
	}
	for line := range bytes.Lines(data) {
		if !reflogEntry(strings.TrimSuffix(string(line), "\n")) {
			return contentUnknown, ""
		}
	}
	return contentInert, "a git reflog (object ids, who, when and a message per line, as git writes under logs/refs/)"
}

func reflogEntry(s string) bool {
	from, rest, _ := strings.Cut(s, " ")
	to, rest, _ := strings.Cut(rest, " ")
	if !objectID(from) || len(to) != len(from) || !objectID(to) {
		return false
	}
	ident, rest, ok := strings.Cut(rest, "> ")
	if !ok || !strings.Contains(ident, " <") {
		return false
	}
	when, message, _ := strings.Cut(rest, "\t")
	stamp, tz, _ := strings.Cut(when, " ")
	return digits(stamp) && len(tz) == 5 && (tz[0] == '+' || tz[0] == '-') && digits(tz[1:]) &&
		!strings.Contains(message, "://")
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
