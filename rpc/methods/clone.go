package methods

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/github"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

var (
	errNoClone = refusal.New(refusal.NotFound, "no such clone",
		"This device started no clone by that name.")
	errClonesOff = refusal.New(refusal.Refused, "no clones folder",
		"This computer has no folder set for clones.")
	errTooManyClones = refusal.New(refusal.Busy, "too many clones",
		"Several clones are already running. Wait for one to finish.")
	errWorktreesName = refusal.New(refusal.Refused, "clone named like a worktrees folder",
		"A checkout's worktrees live in the folder NAME.worktrees beside it, so gatehouse won't clone a repository whose name ends in .worktrees. Clone it on the computer, into a folder of another name.")
)

// worktreesNameCheckOffForTest lets a clone take a name ending in
// .worktrees, so a test can show where it landed. Only tests set it.
var worktreesNameCheckOffForTest atomic.Bool

// worktreesName reports whether a clone's folder called name (or name-2 …,
// which cannot end so) could be the folder where gatehouse keeps the
// worktrees of a checkout beside it, "<checkout>.worktrees"
// (gate.CreateWorktree): found by a black-box attack, a clone of
// owner/app.worktrees beside a clone of owner/app took app's worktrees
// folder, a served checkout that app's next worktree would land in. Case is
// folded: on macOS App.Worktrees is the same folder.
func worktreesName(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".worktrees")
}

// maxClonesRunning bounds the clones running at once on this host, and
// maxCloneJobs the finished ones remembered for their status.
const (
	maxClonesRunning = 3
	maxCloneJobs     = 100
)

// cloneJob is one clone: whose it is, and how it went.
type cloneJob struct {
	ID      string `json:"id"`
	Repo    string `json:"repo"`
	State   string `json:"state"` // running, done, failed
	Target  string `json:"target,omitempty"`
	Name    string `json:"name,omitempty"`
	Error   string `json:"error,omitempty"`
	device  string
	started time.Time
}

// clones is a host's clone jobs.
type clones struct {
	mu   sync.Mutex
	jobs []*cloneJob
}

func (cs *clones) start(device, repo string) (*cloneJob, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	running := 0
	for _, j := range cs.jobs {
		if j.State == "running" {
			running++
		}
	}
	if running >= maxClonesRunning {
		return nil, errTooManyClones
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	j := &cloneJob{ID: "c" + hex.EncodeToString(b[:]), Repo: repo, State: "running", device: device, started: time.Now()}
	cs.jobs = append(cs.jobs, j)
	if len(cs.jobs) > maxCloneJobs {
		if i := slices.IndexFunc(cs.jobs, func(j *cloneJob) bool { return j.State != "running" }); i >= 0 {
			cs.jobs = slices.Delete(cs.jobs, i, i+1)
		}
	}
	return j, nil
}

// status is a job as its device sees it; another device's is not found.
func (cs *clones) status(device, id string) (cloneJob, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, j := range cs.jobs {
		if j.ID == id && j.device == device {
			return *j, nil
		}
	}
	return cloneJob{}, errNoClone
}

func (cs *clones) finish(j *cloneJob, target, name string, err error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if err != nil {
		j.State, j.Error = "failed", refusal.Sentence(err)
		return
	}
	j.State, j.Target, j.Name = "done", target, name
}

func registerClone(r *rpc.Registry) error {
	cs := &clones{}
	return errors.Join(
		rpc.Register(r, rpc.Method{Name: "projects.clone", Scope: trust.Full, Lane: rpc.LaneBackground, Switch: "clone repositories", Wait: 30 * time.Second,
			Reply: "{id, repo, state}", Note: "clones in the background into the clones folder, then serves it; projects.cloneStatus tells how it went; a name ending in .worktrees is refused: that folder holds a checkout's worktrees"},
			func(ctx context.Context, c *rpc.Call, p struct {
				Repo string `json:"repo" value:"owner/name"`
				rpc.SendID
			}) (any, error) {
				repo, err := github.ParseRepoName(p.Repo)
				if err != nil {
					return nil, err
				}
				h := c.Host()
				if h.ClonesDir() == "" {
					return nil, errClonesOff
				}
				if worktreesName(repo.Name) && !worktreesNameCheckOffForTest.Load() {
					return nil, errWorktreesName
				}
				folder, err := github.ClaimCloneFolder(h.ClonesDir(), repo)
				if err != nil {
					return nil, err
				}
				j, err := cs.start(c.Device.ID, repo.FullName())
				if err != nil {
					_ = folder.Remove()
					return nil, err
				}
				tr, gh := c.Trust, h.Targets().GH()
				go func() {
					// The clone outlives the request; its own bound ends it.
					err := github.Clone(context.Background(), gh, tr, repo, folder)
					var t *rpc.Target
					if err == nil {
						t, err = h.AddClone(folder.Path)
					}
					if err != nil {
						slog.Warn("clone failed", "repo", repo.String(), "err", err)
						cs.finish(j, "", "", err)
						return
					}
					cs.finish(j, t.ID, t.Name, nil)
				}()
				return cloneJob{ID: j.ID, Repo: j.Repo, State: "running"}, nil
			}),
		rpc.Register(r, rpc.Method{Name: "projects.cloneStatus", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{id, repo, state: running|done|failed, target?, name?, error?}", Note: "only the device that started the clone sees it"},
			func(ctx context.Context, c *rpc.Call, p struct {
				ID string `json:"id"`
			}) (any, error) {
				return cs.status(c.Device.ID, p.ID)
			}),
		rpc.Register(r, rpc.Method{Name: "projects.recentRepos", Scope: trust.Full, Lane: rpc.LaneRead, ReadOnly: true,
			Reply: "{repos: [{repo, target, name}]}", Note: "repositories cloned here, newest first"},
			func(ctx context.Context, c *rpc.Call, _ struct{}) (any, error) {
				type recent struct {
					Repo   string `json:"repo"`
					Target string `json:"target"`
					Name   string `json:"name"`
				}
				out := []recent{}
				for _, t := range c.Host().Targets().All() {
					if t.Kind != trust.Clone || t.Repo == nil {
						continue
					}
					out = append(out, recent{Repo: github.Origin(t.Repo), Target: t.ID, Name: filepath.Base(t.Root.Path())})
				}
				slices.Reverse(out)
				return map[string]any{"repos": out}, nil
			}),
	)
}
