package relayserver

import (
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/relay"
)

// BenchmarkClusterFailover: devices behind a balancer over three nodes,
// with the client's real timings (reconnect at once, then 1 s, 2 s...);
// node 2 is killed (no goodbye, its sockets cut) and the benchmark reports
// how long until every device that was on it has a socket on a live node.
// The same run reports how long the same devices took to connect at the
// start, from nothing, as the baseline.
//
//	go test -run '^$' -bench ClusterFailover -benchtime 3x ./relay/relayserver/
func BenchmarkClusterFailover(b *testing.B) {
	devices := 300
	if testing.Short() {
		devices = 12
	}
	for b.Loop() {
		b.StopTimer()
		coldMS, backMS, moved := failoverOnce(b, devices)
		b.ReportMetric(coldMS, "ms-cold-connect")
		b.ReportMetric(backMS, "ms-back-online")
		b.ReportMetric(float64(moved), "devices-moved")
		b.StartTimer()
	}
}

func failoverOnce(b *testing.B, n int) (coldMS, backMS float64, moved int) {
	c := startCluster(b, 3, true)
	lb := startLB(b, c.nodes)
	var devs []*device
	for i := range n {
		devs = append(devs, c.signIn(lb.url(), fmt.Sprintf("fo%d", i/10), fmt.Sprintf("dev%d", i)))
	}
	on := func(nodes ...*testNode) (count int, ids map[string]bool) {
		ids = map[string]bool{}
		for _, d := range devs {
			for _, nd := range nodes {
				if localSocket(nd.srv.hub, d.profile.Account.ID, d.profile.DeviceID) != nil {
					count++
					ids[d.profile.DeviceID] = true
				}
			}
		}
		return count, ids
	}
	start := time.Now()
	for _, d := range devs {
		startClient(b, d, false, relay.ClientOptions{BackoffUnit: time.Second})
	}
	if !pollUntil(60*time.Second, func() bool { got, _ := on(c.nodes...); return got == n }) {
		b.Fatal("the devices did not all connect")
	}
	coldMS = float64(time.Since(start).Microseconds()) / 1000
	_, onTwo := on(c.nodes[1])
	start = time.Now()
	c.nodes[1].kill()
	if !pollUntil(60*time.Second, func() bool { got, _ := on(c.nodes[0], c.nodes[2]); return got == n }) {
		b.Fatal("the devices of the killed node did not all come back")
	}
	backMS = float64(time.Since(start).Microseconds()) / 1000
	return coldMS, backMS, len(onTwo)
}
