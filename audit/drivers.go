package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/display"
)

// startAttributes asks gate.AttributeUses which filter, diff and merge
// drivers the tracked files' attributes select (git's own answer) and
// returns the function that waits for it and reports each driver by where
// git's config defines it: the repository's own config
// (attributes-driver), the user's, system or global or a file they include
// (attributes-user-driver), or nowhere (attributes-undefined-driver).
func (a *auditor) startAttributes(repo *gate.Repo, tracked []string) (wait func() error) {
	var attrs *gate.Attributes
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		attrs, err = repo.AttributeUses(a.ctx, a.closed, tracked)
	}()
	return func() error {
		<-done
		if errors.Is(err, gate.ErrTimeout) || errors.Is(err, gate.ErrOutOfMemory) {
			// git was stopped (a FIFO or a device named .gitattributes:
			// the tree scan names it); what it would have answered is
			// unknown.
			a.rep.Truncated = true
			return nil
		}
		if err != nil {
			return err
		}
		a.rep.Truncated = a.rep.Truncated || attrs.Truncated
		for _, u := range attrs.Uses {
			a.attributeUse(u)
		}
		return nil
	}
}

// driverSentences end a driver's finding, by rule; %s is where the
// config defines it.
var driverSentences = map[string]string{
	"attributes-driver":           "which this checkout's own config defines%s: the repository chooses the program git runs (switched off or refused for a phone with Full access off)",
	"attributes-user-driver":      "which your own git config defines, not the repository's%s: the repository chooses the files git runs your program on (switched off or refused for a phone with Full access off)",
	"attributes-undefined-driver": "which no git config defines%s, so git runs no program for it (a name git knows itself, such as merge=union or diff=python, picks a built-in behaviour); a driver of that name added to any config later would run on these files",
}

// driverRule: the repository's own config defining a driver makes it the
// repository's choice, whatever else defines it too.
func driverRule(defined []gate.DriverEntry) string {
	rule := "attributes-undefined-driver"
	for _, e := range defined {
		if e.Local() {
			return "attributes-driver"
		}
		rule = "attributes-user-driver"
	}
	return rule
}

func (a *auditor) attributeUse(u gate.AttributeUse) {
	rule, where := driverRule(u.Defined), ""
	if len(u.Defined) > 0 {
		where = " (" + a.entries(u.Defined) + ")"
	}
	defined := fmt.Sprintf(driverSentences[rule], where)
	driver := fmt.Sprintf("the %s driver \"%s\"", u.Kind, display.Text(u.Driver))
	if u.Path != "" {
		a.addAt(rule, u.Path, u.Line, u.Kind+"="+u.Driver, fmt.Sprintf("makes %s use %s, %s", files(u), driver, defined))
		return
	}
	// No attributes line in the checkout names it: the user's own
	// attributes file does. The first file that selects it places it.
	among := "a tracked file"
	if u.Count > 1 {
		among = "one of " + files(u)
	}
	a.add(rule, u.Files[0], u.Kind+"="+u.Driver,
		fmt.Sprintf("is %s whose attributes select %s (through your own attributes file: no attributes line in the checkout names it), %s", among, driver, defined))
}

// files names the files that select a driver: "a.txt", or "3 tracked
// files (a.txt, b.txt, c.txt, …)".
func files(u gate.AttributeUse) string {
	names := make([]string, len(u.Files))
	for i, f := range u.Files {
		names[i] = display.Text(f)
	}
	if u.Count == 1 {
		return names[0]
	}
	if u.Count > len(names) {
		names = append(names, "…")
	}
	return fmt.Sprintf("%d tracked files (%s)", u.Count, strings.Join(names, ", "))
}

// entries says where each config entry of a driver is, as git named it:
// "filter.lfs.clean, filter.lfs.smudge in the global config ~/.gitconfig".
func (a *auditor) entries(es []gate.DriverEntry) string {
	var groups []string
	keys := map[string][]string{}
	for _, e := range es {
		place := "the " + display.Text(e.Scope) + " config " + a.origin(e.Origin)
		if e.Conditional {
			place += ", included under a condition that does not hold here (git reads it where it does: another branch, a worktree)"
		}
		if keys[place] == nil {
			groups = append(groups, place)
		}
		keys[place] = append(keys[place], display.Text(e.Key))
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = strings.Join(keys[g], ", ") + " in " + g
	}
	return strings.Join(parts, "; ")
}

// origin shows a config file git named: relative to the audited folder
// inside it, under ~ in the home folder git used, else as it is.
func (a *auditor) origin(file string) string {
	if rel, err := filepath.Rel(a.dir, file); err == nil && filepath.IsLocal(rel) {
		return display.Text(filepath.ToSlash(rel))
	}
	if home := os.Getenv("HOME"); home != "" {
		if rel, err := filepath.Rel(home, file); err == nil && filepath.IsLocal(rel) {
			return display.Text("~/" + filepath.ToSlash(rel))
		}
	}
	return display.Text(file)
}
