package audit

import (
	"bytes"
	"strings"

	"github.com/gatehouse/gatehouse/gate"
)

// The gate's own sentences say "runs programs" for every refused key,
// because that is what a phone needs to hear to turn Full access on. A team
// reading its audit needs what each key really does: this file words the
// config findings for the audit, one sentence per kind of key.

// Gate tails: what each refusal means for a phone with Full access off.
const (
	readTail   = "The Read gate refuses this checkout: a phone with Full access off cannot use Git on it at all (turn on Full access for remote devices on this computer to allow it)."
	changeTail = "The Change gate refuses it: a phone with Full access off cannot stage, commit or push here (turn on Full access for remote devices on this computer to allow it)."
)

// remoteKeys name where fetches and pushes go.
func remoteKey(key string) bool {
	sec, rest, _ := strings.Cut(key, ".")
	name := rest[strings.LastIndexByte(rest, '.')+1:]
	switch {
	case sec == "remote" && (name == "url" || name == "pushurl"):
	case sec == "submodule" && name == "url":
	case sec == "branch" && (name == "remote" || name == "pushremote"):
	case key == "remote.pushdefault":
	default:
		return false
	}
	return true
}

// configSentence is what a refused config entry does, truthfully, and which
// gate refuses it. The key is shown with any password in it masked.
func configSentence(f gate.Finding) string {
	what := f.Reason
	if remoteKey(f.Key) && f.Gate == "change" {
		switch v := strings.TrimSpace(f.Value); {
		case strings.Contains(v, "::"):
			what = "names a remote helper (" + v[:strings.Index(v, "::")] + "::), a program git runs to fetch or push"
		case strings.HasPrefix(strings.ToLower(v), "file:") || localPath(v):
			what = "a local path, not a network URL; a fetch or push there reaches files outside the checkout"
		}
	}
	tail := changeTail
	if f.Gate == "read" {
		tail = readTail
	}
	return maskKey(f.Key) + ": " + what + ". " + tail
}

// localPath says whether git reads a remote value as a folder on this
// computer rather than a URL or scp-like host:path.
func localPath(v string) bool {
	if v == "" || strings.Contains(v, "://") {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "\\") {
		return true
	}
	colon := strings.IndexByte(v, ':')
	slash := strings.IndexByte(v, '/')
	// git's rule: host:path is scp-like only when the colon comes before
	// any slash; a one-letter host is a Windows drive.
	return colon < 0 || slash >= 0 && slash < colon || colon == 1
}

// submoduleSentence is the submodules finding's own sentence.
const submoduleSentence = "declares submodules: each carries its own config and hooks in the git folder, which the gate never reads, so reads skip them and a phone with Full access off cannot stage, commit or push here (turn on Full access for remote devices on this computer to allow it)."

// A credential stored in the repository's config: an Authorization header
// git sends with every request, or a URL with a password in it.
type storedCredential struct {
	key, shown string // the key (masked) and the value with its secret masked
	what       string
}

// credentials finds tokens and passwords in config entries, whether or not
// a gate refuses the key: a token in .git/config is on disk for anything
// that reads the folder, and in every copy of it.
func credentials(entries []gate.ConfigEntry) []storedCredential {
	var out []storedCredential
	for _, e := range entries {
		sec, _, _ := strings.Cut(e.Key, ".")
		name := e.Key[strings.LastIndexByte(e.Key, '.')+1:]
		n := len(out)
		switch {
		case sec == "http" && name == "extraheader":
			header, value, ok := strings.Cut(e.Value, ":")
			if ok && strings.EqualFold(strings.TrimSpace(header), "authorization") {
				scheme, _, _ := strings.Cut(strings.TrimSpace(value), " ")
				out = append(out, storedCredential{maskKey(e.Key), strings.TrimSpace(header) + ": " + scheme + " ****",
					"holds an Authorization header, a token git sends with every request"})
			}
		case strings.Contains(e.Value, "://"):
			if masked, ok := maskURL(e.Value); ok {
				out = append(out, storedCredential{maskKey(e.Key), masked, "holds a URL with a password in it"})
			}
		}
		if masked, ok := maskURL(e.Key); ok && len(out) == n { // http.<url>.* or url.<base>.* with a password in the url
			out = append(out, storedCredential{masked, "", "names a URL with a password in it"})
		}
	}
	return out
}

// maskURL hides the password of every scheme://user:password@host in s.
func maskURL(s string) (string, bool) {
	var b strings.Builder
	found := false
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String(), found
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/?#")
		if end < 0 {
			end = len(s)
		}
		authority := s[:end]
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			if user, _, ok := strings.Cut(authority[:at], ":"); ok {
				b.WriteString(user + ":****" + authority[at:])
				s = s[end:]
				found = true
				continue
			}
		}
		b.WriteString(authority)
		s = s[end:]
	}
}

// maskKey is a key with any password in its subsection masked.
func maskKey(key string) string {
	masked, _ := maskURL(key)
	return masked
}

// maxConfigRead bounds the config read for line numbers (the gate refuses
// a larger one anyway).
const maxConfigRead = 1 << 20

// configLine finds the line of .git/config that sets key (as git lists it:
// section and name lowercased), 0 when it cannot tell. It only places a
// finding for a reader: no decision rests on it, and the decision itself
// comes from git's own listing. It reads the common forms: [section],
// [section "sub"] and [section.sub] headers, and "name = value" lines.
func configLine(data []byte, key string) int {
	return configLineWhere(data, func(k string) bool { return k == key })
}

// configLineWhere is configLine for the first key that match accepts.
func configLineWhere(data []byte, match func(key string) bool) int {
	section := ""
	n := 0
	for line := range bytes.Lines(data) {
		n++
		s := strings.TrimSpace(string(line))
		if strings.HasPrefix(s, "[") {
			section = sectionOf(s)
			if rest := s[strings.IndexByte(s, ']')+1:]; strings.TrimSpace(rest) != "" && section != "" {
				s = strings.TrimSpace(rest) // [core] editor = vim
			} else {
				continue
			}
		}
		if section == "" || s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		name, _, _ := strings.Cut(s, "=")
		if match(section + "." + strings.ToLower(strings.TrimSpace(name))) {
			return n
		}
	}
	return 0
}

// sectionOf reads a section header as git lists it, "" when it is not one
// of the common forms.
func sectionOf(s string) string {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return ""
	}
	h := s[1:end]
	if q := strings.IndexByte(h, '"'); q >= 0 {
		if !strings.HasSuffix(h, `"`) || q == len(h)-1 {
			return ""
		}
		sub := strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(h[q+1 : len(h)-1])
		return strings.ToLower(strings.TrimSpace(h[:q])) + "." + sub
	}
	return strings.ToLower(h)
}
