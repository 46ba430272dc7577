package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/rpc"
)

// project is one served project as projects.list names it: its id, and
// the folder's name the page shows.
type project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// listProjects calls projects.list on the computer being called.
type listProjects func(ctx context.Context) ([]byte, error)

// fillCallTarget resolves "target" for a method that takes one, as 'gatehouse
// do' does (see pickTarget), from one projects.list first, and only when
// the target is left out or is not a project id already. When the list
// cannot be had, the parameters go as they are and the host's own answer
// follows.
func fillCallTarget(ctx context.Context, m *rpc.Method, params map[string]any, list listProjects) (map[string]any, error) {
	if m == nil || !m.TakesTarget() {
		return params, nil
	}
	if id, ok := params["target"].(string); ok && targetIDShape.MatchString(id) {
		return params, nil
	}
	out, err := list(ctx)
	if err != nil {
		return params, nil // the call itself will say what is wrong
	}
	var reply struct {
		Projects []project `json:"projects"`
	}
	if json.Unmarshal(out, &reply) != nil {
		return params, nil
	}
	return pickTarget(params, reply.Projects)
}

// targetIDShape is the shape of trust.TargetID: "t" and 16 hex digits.
var targetIDShape = regexp.MustCompile(`^t[0-9a-f]{16}$`)

// maxTargetChoices bounds the projects a sentence lists.
const maxTargetChoices = 12

// pickTarget fills in "target" in params: left out with one project served,
// that one; given as a project's id, as it is; given as a project's name
// (the folder's name, as the page shows it), that project's id. Left out
// with several served, or naming none of them, it refuses with a sentence
// that lists the choices, rather than send a call the host can only refuse
// with "This project is not served here".
func pickTarget(params map[string]any, served []project) (map[string]any, error) {
	raw, given := params["target"]
	if !given {
		switch len(served) {
		case 0:
			return params, nil // the host says nothing is served
		case 1:
			return withTarget(params, served[0].ID), nil
		}
		return nil, fmt.Errorf("%d projects are served; name one with \"target\": %s", len(served), targetChoices(served))
	}
	name, ok := raw.(string)
	if !ok {
		return params, nil // the host refuses a target that is not a string
	}
	var byName []project
	for _, p := range served {
		if p.ID == name {
			return params, nil
		}
		if p.Name == name {
			byName = append(byName, p)
		}
	}
	switch len(byName) {
	case 1:
		return withTarget(params, byName[0].ID), nil
	case 0:
		return nil, fmt.Errorf("no project %q is served here; the target is one of: %s", display.Text(name), targetChoices(served))
	}
	return nil, fmt.Errorf("%d projects are called %q; name one by its id: %s", len(byName), display.Text(name), targetChoices(byName))
}

// withTarget is params with "target" set to id, params left as it was.
func withTarget(params map[string]any, id string) map[string]any {
	filled := map[string]any{"target": id}
	for k, v := range params {
		if k != "target" {
			filled[k] = v
		}
	}
	return filled
}

// targetChoices lists projects as "name (id)", at most maxTargetChoices.
func targetChoices(served []project) string {
	if len(served) == 0 {
		return "none is served"
	}
	var parts []string
	for i, p := range served {
		if i == maxTargetChoices {
			parts = append(parts, fmt.Sprintf("and %d more ('projects.list' lists them)", len(served)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", display.Text(p.Name), display.Text(p.ID)))
	}
	return strings.Join(parts, ", ")
}
