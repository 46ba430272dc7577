package methods

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/gatehouse/gatehouse/github"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Project is one served folder as a device sees it: by id and folder name,
// never by its path on this computer.
type Project struct {
	ID     string  `json:"id"`
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	Repo   *string `json:"repo"` // GitHub owner/name of origin, or null
	Branch string  `json:"branch,omitempty"`
	Git    bool    `json:"git"`
	Parent string  `json:"parent,omitempty"`
}

// iconCandidates are the files a project's icon is looked for in.
var iconCandidates = []string{"favicon.svg", "public/favicon.svg", "static/favicon.svg", "logo.svg",
	"favicon.png", "public/favicon.png", "logo.png", "icon.png", "public/logo.png", "assets/logo.png"}

// maxIcon bounds an icon.
const maxIcon = 64 << 10

func registerProjects(r *rpc.Registry) error {
	list := rpc.Register(r, rpc.Method{Name: "projects.list", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
		Reply: "{projects: [{id, name, kind, repo, branch, git, parent?}]}"},
		func(ctx context.Context, c *rpc.Call, _ struct{}) (any, error) {
			out := []Project{}
			for _, t := range c.Host().Targets().All() {
				p := Project{ID: t.ID, Name: t.Name, Kind: string(t.Kind), Git: t.Repo != nil, Parent: t.Parent}
				if t.Repo != nil {
					p.Branch = t.Repo.HeadBranch()
					if id := github.Origin(t.Repo); id != "" {
						p.Repo = &id
					}
				}
				out = append(out, p)
			}
			return map[string]any{"projects": out}, nil
		})
	icons := rpc.Register(r, rpc.Method{Name: "projects.icons", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
		Reply: "{icons: {id: dataURL|null}}", Note: "fixed candidates inside the project, no links, at most 64 KiB each"},
		func(ctx context.Context, c *rpc.Call, p struct {
			IDs []string `json:"ids"`
		}) (any, error) {
			if err := rpc.IDsParam(p.IDs); err != nil {
				return nil, err
			}
			icons := map[string]*string{}
			size := 0
			for _, id := range p.IDs {
				if ctx.Err() != nil {
					break
				}
				t, err := c.Target(id)
				if err != nil {
					continue
				}
				icons[id] = nil
				if url := iconOf(c, t); url != "" && size+len(url) < rpc.PageBudget-16<<10 {
					icons[id] = &url
					size += len(url)
				}
			}
			return map[string]any{"icons": icons}, nil
		})
	return errors.Join(list, icons)
}

// iconOf reads the first candidate that is a small regular file inside the
// project (fsguard refuses links out, hard links, FIFOs, and secrets below
// full) as a data: URL.
func iconOf(c *rpc.Call, t *rpc.Target) string {
	for _, name := range iconCandidates {
		data, err := t.Root.ReadFile(c.Grant, name, maxIcon)
		if err != nil {
			continue
		}
		mime := http.DetectContentType(data)
		if len(name) > 4 && name[len(name)-4:] == ".svg" {
			mime = "image/svg+xml"
		}
		if mime != "image/png" && mime != "image/svg+xml" {
			continue
		}
		return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
	}
	return ""
}
