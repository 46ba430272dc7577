package secretfiles

import "testing"

// On a Mac's HFS+ disk ".e\u200cnv" opens .env (the file system leaves the
// zero-width non-joiner out, as git's is_hfs_dotgit reads names): a device
// asking by that name read .env's bytes under a name no rule matched. The
// matcher also judges the name as HFS+ reads it.
func TestANameHFSReadsAsASecretIsSecret(t *testing.T) {
	m := Default()
	for _, p := range []string{".e\u200cnv", ".en\u200dv", ".aws/cred\u200dentials", "keys/id_\u202ersa", "config/.npm\u206arc"} {
		if _, ok, _ := m.match(p); ok {
			t.Fatalf("%q is secret by its name as given: this case shows nothing", p)
		}
		if _, ok := m.Match(p); !ok {
			t.Errorf("%q: not secret, yet HFS+ opens a secret file by it", p)
		}
	}
	// A name that holds such a code point and is no secret stays shown:
	// emoji sequences are joined by U+200D.
	for _, p := range []string{"\U0001F468\u200d\U0001F469\u200d\U0001F467.txt", "notes\u200c.md", "\u200fREADME"} {
		if r, ok := m.Match(p); ok {
			t.Errorf("%q is taken for a secret by rule %q", p, r.Pattern)
		}
	}
}
