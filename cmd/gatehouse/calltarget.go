package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gatehouse/gatehouse/rpc"
)

// listProjects calls projects.list on the computer being called.
type listProjects func(ctx context.Context) ([]byte, error)

// fillCallTarget names the one project when a method that takes a target
// is called without one and the computer serves exactly one, as 'gatehouse
// do' does: one projects.list first, and only then. With several projects
// it says how to choose and leaves the parameters as they are, so the
// host's own refusal follows.
func fillCallTarget(ctx context.Context, e *env, m *rpc.Method, params map[string]any, list listProjects) map[string]any {
	if m == nil || !m.TakesTarget() {
		return params
	}
	if _, ok := params["target"]; ok {
		return params
	}
	out, err := list(ctx)
	if err != nil {
		return params // the call itself will say what is wrong
	}
	var reply struct {
		Projects []struct {
			ID string `json:"id"`
		} `json:"projects"`
	}
	if json.Unmarshal(out, &reply) != nil {
		return params
	}
	if n := len(reply.Projects); n != 1 {
		fmt.Fprintf(e.stderr, "gatehouse call: that computer serves %d projects; name one with \"target\" ('gatehouse call ... projects.list' lists their ids)\n", n)
		return params
	}
	filled := map[string]any{"target": reply.Projects[0].ID}
	for k, v := range params {
		filled[k] = v
	}
	return filled
}
