package audit

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
)

// maxContent bounds the blob the audit reads of one secret-named file: a
// certificate, a public key or a service-account JSON says what it is in
// its first lines, and reading more costs time on a large repository.
const maxContent = 64 << 10

// maxContentReads bounds how many blobs one audit reads (one git process
// each, about 3 ms): past it, the name decides, as it did before.
const maxContentReads = 2000

// content is what a secret-named file's bytes say it holds.
type content int

const (
	contentUnknown content = iota // the name decides: still an error
	contentPrivate                // a private key, seen in the content
	contentPublic                 // only certificates, public keys, or no key
	contentInert                  // a broad rule's file holds nothing a secret could be
)

// contentChecked says whether a name is ambiguous enough that its content
// decides: key and certificate files, SSH key names, and service-account
// JSON. A .env or a shell history is never judged by content: a public key
// pasted into one says nothing about the rest of it.
func contentChecked(name string, r ruleReason) bool {
	base := strings.ToLower(path.Base(name))
	switch path.Ext(base) {
	case ".pem", ".key", ".crt", ".cer", ".cert", ".asc", ".gpg", ".pgp", ".ppk":
		return true
	case ".json":
		return r.serviceAccount()
	}
	return strings.HasPrefix(base, "id_") || strings.HasPrefix(base, "ssh_host_") ||
		strings.HasSuffix(base, "_rsa") || strings.HasSuffix(base, "_dsa") ||
		strings.HasSuffix(base, "_ecdsa") || strings.HasSuffix(base, "_ed25519")
}

// ruleReason is a secret rule's reason text.
type ruleReason string

func (r ruleReason) serviceAccount() bool {
	s := strings.ToLower(string(r))
	return strings.Contains(s, "service-account") || strings.Contains(s, "service account")
}

// publicLabels are PEM labels that hold no secret (RFC 7468 and OpenSSL's
// and GnuPG's labels). A label with PRIVATE KEY in it is a private key;
// any other label leaves the name to decide.
var publicLabels = map[string]string{
	"CERTIFICATE":             "a certificate",
	"TRUSTED CERTIFICATE":     "a certificate",
	"X509 CERTIFICATE":        "a certificate",
	"X509 CRL":                "a revocation list",
	"CERTIFICATE REQUEST":     "a certificate request",
	"NEW CERTIFICATE REQUEST": "a certificate request",
	"PUBLIC KEY":              "a public key",
	"RSA PUBLIC KEY":          "a public key",
	"PGP PUBLIC KEY BLOCK":    "a PGP public key",
	"PGP SIGNATURE":           "a PGP signature",
	"DH PARAMETERS":           "Diffie-Hellman parameters",
	"EC PARAMETERS":           "EC parameters",
}

// sshPublicTypes start an OpenSSH public key line ("ssh-ed25519 AAAA...").
var sshPublicTypes = []string{"ssh-rsa", "ssh-dss", "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
	"ecdsa-sha2-nistp521", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com"}

// judge reads a secret-named file's first bytes (truncated: there were
// more) and says what they hold, with a short description that never
// quotes the secret itself.
func judge(name string, data []byte, truncated bool) (content, string) {
	if strings.EqualFold(path.Ext(name), ".json") {
		return judgeJSON(data, truncated)
	}
	var public []string
	for line := range bytes.Lines(data) {
		s := strings.TrimSpace(string(line))
		if strings.HasPrefix(s, "PuTTY-User-Key-File-") || strings.HasPrefix(s, "Private-Lines:") {
			return contentPrivate, "a PuTTY private key"
		}
		if label, ok := pemLabel(s); ok {
			what := labelKind(label)
			switch what {
			case "":
				return contentUnknown, ""
			case "private":
				return contentPrivate, "a private key (-----BEGIN " + label + "-----)"
			}
			public = append(public, what)
			continue
		}
		if sshPublicLine(s) {
			public = append(public, "an SSH public key")
		}
	}
	if len(public) == 0 || truncated { // a longer file may hold a key further on
		return contentUnknown, ""
	}
	return contentPublic, describe(public)
}

// labelKind says what a PEM label holds: "private", a description of a
// public thing, or "" when the label is not known. Tools add their own
// words in front ("ROOT PUBLIC KEY", "OPENSSH PRIVATE KEY"), so the end of
// the label decides, and PRIVATE anywhere wins.
func labelKind(label string) string {
	switch {
	case strings.Contains(label, "PRIVATE"):
		return "private"
	case publicLabels[label] != "":
		return publicLabels[label]
	case strings.HasSuffix(label, " PUBLIC KEY"):
		return "a public key"
	case strings.HasSuffix(label, " CERTIFICATE"):
		return "a certificate"
	}
	return ""
}

// pemLabel reads a "-----BEGIN LABEL-----" line.
func pemLabel(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "-----BEGIN ")
	if !ok {
		return "", false
	}
	label, ok := strings.CutSuffix(rest, "-----")
	return label, ok
}

func sshPublicLine(s string) bool {
	for _, t := range sshPublicTypes {
		if rest, ok := strings.CutPrefix(s, t+" "); ok && strings.HasPrefix(rest, "AAAA") {
			return true
		}
	}
	return false
}

func describe(kinds []string) string {
	seen := map[string]bool{}
	var out []string
	for _, k := range kinds {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return strings.Join(out, " and ")
}

// judgeJSON tells a Google service-account key ("type": "service_account"
// with a "private_key") from a JSON that holds no private key (a template,
// a Kubernetes ServiceAccount manifest).
func judgeJSON(data []byte, truncated bool) (content, string) {
	if truncated {
		return contentUnknown, ""
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil {
		return contentUnknown, ""
	}
	if key, _ := doc["private_key"].(string); strings.TrimSpace(key) != "" {
		if doc["type"] == "service_account" {
			return contentPrivate, `a Google service-account key ("type": "service_account" with a "private_key")`
		}
		return contentPrivate, `a JSON with a "private_key"`
	}
	for _, k := range []string{"private_key_id", "client_secret", "password", "secret", "token", "refresh_token", "api_key"} {
		if v, ok := doc[k]; ok && v != "" && v != nil {
			return contentUnknown, ""
		}
	}
	return contentPublic, `a JSON with no "private_key" or other secret field`
}
