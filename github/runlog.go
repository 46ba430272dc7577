package github

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/redact"
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
// and values that look like secrets masked (cleanLog, internal/redact).
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
// drawn as text (plainLine), masked (redact.Lines, over the whole log so a
// private key's block is masked from its BEGIN line even when only its
// body is among the last lines) and cut (cutLine), and says whether any
// were left out and how many were masked.
func cleanLog(text []byte) (lines []string, truncated bool, masked int) {
	all := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	for i, l := range all {
		all[i] = plainLine(l)
	}
	plain := slices.Clone(all)
	redact.Lines(all)
	size := 0
	for i := len(all) - 1; i >= 0; i-- {
		line := cutLine(all[i])
		if len(lines) == maxLogLines || size+len(line)+1 > maxLogBytes {
			truncated = true
			break
		}
		if all[i] != plain[i] {
			masked++
		}
		size += len(line) + 1
		lines = append(lines, line)
	}
	slices.Reverse(lines)
	return lines, truncated, masked
}

// escapes are terminal control sequences a log carries (colours, cursor
// moves, titles): CSI, OSC (ended by BEL or ST) and two-byte escapes.
var escapes = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|\x1b[@-Z\\\\-_]|\u009b[0-?]*[ -/]*[@-~]")

// cleanLine is a short text gh printed (a job's or step's name) as the
// page draws it: plainLine, masked (a matrix value may be a secret), then
// cutLine.
func cleanLine(s string) string {
	s, _ = redact.Line(plainLine(s))
	return cutLine(s)
}

// plainLine is a log line as text the page draws: escape sequences taken
// out, any other control character (a carriage return that would redraw
// the line, a lone ESC) dropped, invalid UTF-8 replaced, a tab kept.
func plainLine(s string) string {
	s = escapes.ReplaceAllString(strings.ToValidUTF8(s, "\uFFFD"), "")
	return strings.Map(func(r rune) rune {
		if r == '\t' || !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' && !unicode.Is(unicode.Bidi_Control, r) {
			return r
		}
		return -1
	}, s)
}

// cutLine cuts s to maxLogLine bytes, at a character's start.
func cutLine(s string) string {
	if len(s) <= maxLogLine {
		return s
	}
	cutAt := maxLogLine
	for cutAt > 0 && !utf8.RuneStart(s[cutAt]) {
		cutAt--
	}
	return s[:cutAt] + "…"
}
