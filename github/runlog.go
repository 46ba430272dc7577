package github

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/trust"
)

// Bounds on a failed job's log as a device gets it: the last lines of the
// job (where its failed step stopped), at most maxLogLines of them and
// maxLogBytes in all, and the failed jobs of one run shown.
const (
	maxLogLines  = 200
	maxLogBytes  = 32 << 10
	maxLogLine   = 1024
	maxFailedLog = 3
)

// FailedLog is why a run failed: each failed job's failed step and the
// last lines of its log.
type FailedLog struct {
	Jobs []FailedJob `json:"jobs"`
	// More says the run had more failed jobs than are shown.
	More bool `json:"more,omitempty"`
}

// FailedJob is one failed job: its name, its failed step's name (when
// GitHub names one), the last lines of its log, whether lines were left out
// before them, and how many lines had a value masked.
type FailedJob struct {
	Name      string   `json:"name"`
	Step      string   `json:"step,omitempty"`
	Lines     []string `json:"lines"`
	Truncated bool     `json:"truncated"`
	Masked    int      `json:"masked,omitempty"`
}

// RunLog reads why run id failed: the run's jobs (gh run view), then each
// failed job's log through GitHub's API (gh api, pinned to the project's
// repository, its host as GH_HOST), the last lines kept, terminal control taken out
// and values that look like secrets masked (cleanLog).
func RunLog(ctx context.Context, r *gate.Repo, t trust.Trust, id int64) (*FailedLog, error) {
	if id <= 0 {
		return nil, ErrBadParams
	}
	gh, pin, _, err := start(ctx, r, t, false, "see why a check failed")
	if err != nil {
		return nil, err
	}
	out, err := gh.Run(ctx, gate.GHCall{Args: []string{"run", "view", strconv.FormatInt(id, 10), "--repo", pin.String(), "--json", "jobs"}})
	if err != nil {
		return nil, err
	}
	var run struct {
		Jobs []struct {
			DatabaseID int64
			Name       string
			Conclusion string
			Steps      []struct{ Name, Conclusion string }
		}
	}
	if err := json.Unmarshal(out, &run); err != nil {
		return nil, gate.ErrGHOutput
	}
	l := &FailedLog{Jobs: []FailedJob{}}
	for _, j := range run.Jobs {
		if j.Conclusion != "failure" && j.Conclusion != "timed_out" || j.DatabaseID <= 0 {
			continue
		}
		if len(l.Jobs) == maxFailedLog {
			l.More = true
			break
		}
		fj := FailedJob{Name: cleanLine(j.Name)}
		for _, s := range j.Steps {
			if s.Conclusion == "failure" {
				fj.Step = cleanLine(s.Name)
				break
			}
		}
		text, err := gh.Run(ctx, gate.GHCall{Args: []string{"api",
			"repos/" + pin.FullName() + "/actions/jobs/" + strconv.FormatInt(j.DatabaseID, 10) + "/logs"}, Host: pin.Host})
		if err != nil {
			return nil, err
		}
		fj.Lines, fj.Truncated, fj.Masked = cleanLog(text)
		l.Jobs = append(l.Jobs, fj)
	}
	return l, nil
}

// cleanLog keeps the last lines of a job's log within the bounds, each one
// cleaned (cleanLine) and masked (maskSecret), and says whether any were
// left out and how many were masked.
func cleanLog(text []byte) (lines []string, truncated bool, masked int) {
	all := bytes.Split(bytes.TrimRight(text, "\n"), []byte("\n"))
	size := 0
	for i := len(all) - 1; i >= 0; i-- {
		line := cleanLine(string(all[i]))
		line, hit := maskSecret(line)
		if len(lines) == maxLogLines || size+len(line)+1 > maxLogBytes {
			truncated = true
			break
		}
		if hit {
			masked++
		}
		size += len(line) + 1
		lines = append(lines, line)
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return lines, truncated, masked
}

// escapes are terminal control sequences a log carries (colours, cursor
// moves, titles): CSI, OSC (ended by BEL or ST) and two-byte escapes.
var escapes = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|\x1b[@-Z\\\\-_]|\u009b[0-?]*[ -/]*[@-~]")

// cleanLine is a log line as text the page draws: escape sequences taken
// out, any other control character (a carriage return that would redraw
// the line, a lone ESC) dropped, invalid UTF-8 replaced, a tab kept, and
// cut to maxLogLine bytes.
func cleanLine(s string) string {
	s = escapes.ReplaceAllString(strings.ToValidUTF8(s, "\uFFFD"), "")
	s = strings.Map(func(r rune) rune {
		if r == '\t' || !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' && !unicode.Is(unicode.Bidi_Control, r) {
			return r
		}
		return -1
	}, s)
	if len(s) > maxLogLine {
		cutAt := maxLogLine
		for cutAt > 0 && !utf8.RuneStart(s[cutAt]) {
			cutAt--
		}
		s = s[:cutAt] + "…"
	}
	return s
}

// secretValues are values that look like a credential wherever they stand
// in a line: GitHub's own token forms, cloud keys, a private key's armour,
// and a URL's password.
var secretValues = regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|-----BEGIN [A-Z ]*PRIVATE KEY-----|(://[^/\s:@]+:)[^@\s/]+@`)

// secretAssignment is NAME=value or NAME: value where the name says it
// holds a secret (the names .env files and CI settings use).
var secretAssignment = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key|private[_-]?key|credential|authorization)[A-Za-z0-9_.-]*["']?\s*[:=]\s*(?:bearer\s+|basic\s+|token\s+)?)("[^"]*"|'[^']*'|\S+)`)

// maskSecret masks what looks like a secret's value in a log line with
// "***" (GitHub's own mask for a secret it knows). It catches the forms
// above only: a secret printed bare, in no known form, stays; the log is
// the repository's own CI output, which GitHub already masks for the
// secrets it was given.
func maskSecret(line string) (string, bool) {
	out := secretValues.ReplaceAllStringFunc(line, func(m string) string {
		if strings.HasPrefix(m, "://") {
			return m[:strings.LastIndexByte(m, ':')+1] + "***@"
		}
		return "***"
	})
	out = secretAssignment.ReplaceAllStringFunc(out, func(m string) string {
		sub := secretAssignment.FindStringSubmatch(m)
		return sub[1] + "***"
	})
	return out, out != line
}
