package methods

import (
	"context"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Watched is a subscribed checkout's state now.
type Watched struct {
	Target string `json:"target"`
	Head   string `json:"head,omitempty"`
	Dirty  bool   `json:"dirty"`
}

func registerSubscribe(r *rpc.Registry) error {
	return rpc.Register(r, rpc.Method{Name: "subscribe", Scope: trust.View, Lane: rpc.LaneRead, ReadOnly: true,
		Reply: "{targets: [{target, head, dirty}]}", Note: "checkout.changed {target} events for 10 minutes"},
		func(ctx context.Context, c *rpc.Call, p struct {
			Targets []string `json:"targets"`
		}) (any, error) {
			if err := rpc.IDsParam(p.Targets); err != nil {
				return nil, err
			}
			var ts []*rpc.Target
			out := []Watched{}
			for _, id := range p.Targets {
				t, err := c.Target(id)
				if err != nil {
					return nil, err
				}
				ts = append(ts, t)
				w := Watched{Target: id}
				if t.Repo != nil {
					if st, err := t.Repo.Status(ctx, c.Trust); err == nil {
						w.Head, w.Dirty = st.Head, len(st.Files) > 0
					}
				}
				out = append(out, w)
			}
			c.Host().Subscribe(c.Device.ID, ts)
			return map[string]any{"targets": out}, nil
		})
}
