// Command relay-bench measures the relay with real sockets on loopback: the
// relay runs in a child process (this program, -child), the devices in this
// one. It reports, in one run:
//
//   - resident memory per idle socket with -idle sockets open (the relay's
//     RSS and Go heap and stacks, before and after, divided by the count);
//   - frames forwarded per second between -pairs device pairs with 1 KiB
//     bodies, and p50/p99 latency at half that rate;
//   - forwarding throughput in MB/s with 64 KiB bodies, against the raw
//     XChaCha20-Poly1305 seal+open speed measured here;
//   - the relay's CPU time per frame and per MB at both sizes, which must not
//     grow with the body beyond a copy.
//
// With -nodes 2 it then measures the same between two relay nodes in the
// same run (BENCHMARKS.md, the relay cluster): two children joined through a NATS server started
// in this process (the nats-server module) and sharing one SQLite file,
// which is not on the forwarding path (it is read at connect and for
// presence); the idle sockets all on node 1, each pair's sender on node 1
// and its receiver on node 2, and the CPU of both nodes counted. The last
// lines put the two-node figures against the one-node ones.
//
// With -binary the devices send protocol 2's binary frames (relay/binary.go)
// instead of JSON text frames, so the two can be put side by side.
//
// Run: go run ./bench/relay [-pairs 100] [-idle 10000] [-seconds 5] [-nodes 2] [-binary]
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/internal/atomicfile"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/relay/relayserver"
	"github.com/gorilla/websocket"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"golang.org/x/crypto/chacha20poly1305"
)

func main() {
	child := flag.Bool("child", false, "run the relay (internal)")
	dir := flag.String("dir", "", "the relay's folder (internal)")
	pairs := flag.Int("pairs", 100, "device pairs forwarding 1 KiB frames")
	idle := flag.Int("idle", 10000, "idle sockets for the memory measure")
	seconds := flag.Float64("seconds", 5, "length of each forwarding phase")
	nodes := flag.Int("nodes", 1, "1: one relay; 2: one relay, then two nodes over NATS, in the same run")
	natsURL := flag.String("nats", "", "join other nodes through this NATS (internal)")
	node := flag.String("node", "n1", "the node's name (internal)")
	binary := flag.Bool("binary", false, "forward binary frames (protocol 2) instead of JSON text")
	flag.Parse()
	if *child {
		runRelay(*dir, *natsURL, *node)
		return
	}
	if *nodes != 1 && *nodes != 2 {
		fmt.Fprintln(os.Stderr, "relay-bench: -nodes is 1 or 2")
		os.Exit(2)
	}
	if err := run(*pairs, *idle, time.Duration(*seconds*float64(time.Second)), *nodes, *binary); err != nil {
		fmt.Fprintln(os.Stderr, "relay-bench:", err)
		os.Exit(1)
	}
}

// runRelay is the child: a relay on loopback with the frame limit raised
// (the benchmark measures the relay, not its limit).
func runRelay(dir, natsURL, node string) {
	secret, err := relayserver.LoadSecret(filepath.Join(dir, "secret"))
	must(err)
	st, err := relayserver.OpenStore(filepath.Join(dir, "relay.db"))
	must(err)
	o := relayserver.Options{Store: st, Secret: secret, FrameLimitForTest: &relayserver.FrameLimit{Rate: 1e9, Burst: 1e9},
		Node: node, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if natsURL != "" {
		nc, err := relayserver.DialNATS(natsURL, node)
		must(err)
		o.Cluster = &relayserver.Cluster{NATS: nc}
	}
	srv, err := relayserver.New(o)
	must(err)
	// SIGUSR1: collect and return free memory to the OS, so the parent
	// reads what the sockets hold rather than garbage not yet collected
	// (an idle relay gets there on its own: the runtime forces a GC every
	// two minutes and its scavenger returns free pages).
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			debug.FreeOSMemory()
		}
	}()
	if prof := os.Getenv("RELAY_BENCH_CPUPROFILE"); prof != "" { // written on SIGTERM
		f, err := os.Create(prof)
		must(err)
		must(pprof.StartCPUProfile(f))
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(0)
		}()
	}
	mux := http.NewServeMux() // the metrics are off the relay's API; the bench reads them beside it
	mux.Handle("/", srv)
	mux.Handle("GET /metrics", srv.MetricsHandler(""))
	hs := &http.Server{Handler: mux}
	l, err := netListen()
	must(err)
	// Written whole or not at all: the parent polls for it, and a plain
	// write let it read the file still empty now and then (and dial ":80").
	must(atomicfile.Write(filepath.Join(dir, "addr-"+node), []byte(l.Addr().String()), 0o600))
	_ = hs.Serve(l)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay-bench:", err)
		os.Exit(1)
	}
}

type dev struct {
	account, id, token string
}

// register makes accounts of n devices each directly in the database and
// mints their tokens with the relay's secret (sign-in is rate limited).
func register(st *relayserver.Store, secret []byte, prefix string, accounts, per int) ([][]dev, error) {
	ctx := context.Background()
	out := make([][]dev, accounts)
	for a := range accounts {
		acct := relay.Account{ID: fmt.Sprintf("bench:%s%d", prefix, a), Login: "bench"}
		for d := range per {
			key := make([]byte, 32)
			_, _ = rand.Read(key)
			dv := relay.Device{ID: fmt.Sprintf("%s-%d-%d", prefix, a, d), Name: "bench", Platform: "bench", PublicKey: base64.StdEncoding.EncodeToString(key)}
			gen, err := st.Register(ctx, acct, dv)
			if err != nil {
				return nil, err
			}
			tok, err := relayserver.SignTokenForTest(secret, relay.Claims{Account: acct.ID, Device: dv.ID, Issued: time.Now().Unix(),
				Expires: time.Now().Add(time.Hour).Unix(), Gen: gen})
			if err != nil {
				return nil, err
			}
			out[a] = append(out[a], dev{acct.ID, dv.ID, tok})
		}
	}
	return out, nil
}

type child struct {
	cmd  *exec.Cmd
	addr string
}

// settle asks the child to collect garbage and return free memory.
func (c *child) settle() {
	_ = c.cmd.Process.Signal(syscall.SIGUSR1)
	time.Sleep(time.Second)
}

func (c *child) rss() int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpu is the child's user+system CPU time.
func (c *child) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // clock ticks: 100 Hz on Linux
}

// metric reads one value from the child's /metrics.
func (c *child) metric(name string) float64 {
	res, err := http.Get("http://" + c.addr + "/metrics")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// name, or name{labels} (the relay labels every metric with its node)
		if f := strings.Fields(sc.Text()); len(f) == 2 && (f[0] == name || strings.HasPrefix(f[0], name+"{")) {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return 0
}

func dial(addr string, d dev) (*websocket.Conn, error) {
	dl := websocket.Dialer{ReadBufferSize: 1024, WriteBufferSize: 1024, HandshakeTimeout: 30 * time.Second}
	ws, _, err := dl.Dial("ws://"+addr+"/v1/connect?host=0", http.Header{"Authorization": {"Bearer " + d.token}})
	return ws, err
}

func run(pairs, idle int, phase time.Duration, nodes int, binary bool) error {
	dir, err := os.MkdirTemp("", "relay-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	secret, err := relayserver.LoadSecret(filepath.Join(dir, "secret"))
	if err != nil {
		return err
	}
	st, err := relayserver.OpenStore(filepath.Join(dir, "relay.db"))
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "registering %d idle devices and %d pairs...\n", idle, pairs)
	idleDevs, err := register(st, secret, "idle", (idle+9)/10, 10)
	if err != nil {
		return err
	}
	pairDevs, err := register(st, secret, "pair", pairs, 2)
	if err != nil {
		return err
	}
	bigDevs, err := register(st, secret, "big", 4, 2)
	if err != nil {
		return err
	}
	st.Close()
	aead, err := aeadSpeed()
	if err != nil {
		return err
	}
	fmt.Printf("raw XChaCha20-Poly1305 seal+open, 64 KiB: %.0f MB/s (one core, this process)\n", aead)

	measure := func(cs []*child) (res results, err error) {
		if idle > 0 {
			if res.idleKiB, err = measureIdle(cs[0], idleDevs, idle); err != nil {
				return res, err
			}
		}
		if len(pairDevs) > 0 {
			if res.small, err = forward(cs, pairDevs, 1<<10, phase, true, binary); err != nil {
				return res, err
			}
		}
		res.big, err = forward(cs, bigDevs, 64<<10, phase, true, binary)
		return res, err
	}
	fmt.Println("== one relay")
	one, err := withChildren(dir, []string{"n1"}, "", measure)
	if err != nil || nodes == 1 {
		return err
	}
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		return err
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		return fmt.Errorf("nats-server did not start")
	}
	fmt.Println("== two nodes over NATS: senders on node 1, receivers on node 2")
	two, err := withChildren(dir, []string{"n1", "n2"}, ns.ClientURL(), measure)
	if err != nil {
		return err
	}
	fmt.Println("== two nodes against one, same run")
	if idle > 0 {
		fmt.Printf("  idle socket: %.2f KiB against %.2f KiB (%.2fx)\n", two.idleKiB, one.idleKiB, two.idleKiB/one.idleKiB)
	}
	for _, r := range []struct {
		name     string
		one, two phaseResult
	}{{"1 KiB", one.small, two.small}, {"64 KiB", one.big, two.big}} {
		if r.one.frames == 0 {
			continue
		}
		fmt.Printf("  %s: %.0f against %.0f frames/s (%.2fx), %.1f against %.1f MB/s, CPU %.0f against %.0f µs per MB (%.2fx)",
			r.name, r.two.frames, r.one.frames, r.two.frames/r.one.frames, r.two.mbps, r.one.mbps, r.two.cpuPerMB, r.one.cpuPerMB, r.two.cpuPerMB/r.one.cpuPerMB)
		if r.one.p50 > 0 {
			fmt.Printf("; p50 %v against %v, p99 %v against %v", r.two.p50, r.one.p50, r.two.p99, r.one.p99)
		}
		fmt.Println()
	}
	return nil
}

// results are one setup's figures.
type results struct {
	idleKiB    float64
	small, big phaseResult
}

type phaseResult struct {
	frames, mbps, cpuPerMB float64
	p50, p99               time.Duration
}

// withChildren starts one relay child per node name (joined through
// natsURL when given), runs f on them and stops them.
func withChildren(dir string, names []string, natsURL string, f func([]*child) (results, error)) (results, error) {
	self, _ := os.Executable()
	var cs []*child
	defer func() {
		for _, c := range cs {
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
			_ = c.cmd.Wait()
		}
	}()
	for _, name := range names {
		addrFile := filepath.Join(dir, "addr-"+name)
		_ = os.Remove(addrFile)
		c := &child{cmd: exec.Command(self, "-child", "-dir", dir, "-node", name, "-nats", natsURL)}
		c.cmd.Stderr = os.Stderr
		if err := c.cmd.Start(); err != nil {
			return results{}, err
		}
		cs = append(cs, c)
		for i := 0; ; i++ {
			if b, err := os.ReadFile(addrFile); err == nil {
				c.addr = string(b)
				break
			}
			if i > 500 {
				return results{}, fmt.Errorf("the relay did not start")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return f(cs)
}

// measureIdle opens n idle sockets and reports what each costs the relay.
func measureIdle(c *child, accounts [][]dev, n int) (float64, error) {
	time.Sleep(500 * time.Millisecond)
	c.settle()
	rss0, heap0, stack0 := c.rss(), c.metric("go_memstats_heap_inuse_bytes"), c.metric("go_memstats_stack_inuse_bytes")
	var socks []*websocket.Conn
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	var failed atomic.Int64
	count := 0
	for _, acct := range accounts {
		for _, d := range acct {
			if count == n {
				break
			}
			count++
			wg.Add(1)
			sem <- struct{}{}
			go func(d dev) {
				defer wg.Done()
				defer func() { <-sem }()
				ws, err := dial(c.addr, d)
				if err != nil {
					failed.Add(1)
					return
				}
				mu.Lock()
				socks = append(socks, ws)
				mu.Unlock()
				go func() { // drain presence frames, as a device would
					for {
						if _, _, err := ws.NextReader(); err != nil {
							return
						}
					}
				}()
			}(d)
		}
	}
	wg.Wait()
	if failed.Load() > 0 {
		return 0, fmt.Errorf("%d of %d idle sockets failed to connect", failed.Load(), n)
	}
	time.Sleep(3 * time.Second) // presence rounds settle; send queues drain and their goroutines exit
	rssLive := c.rss()
	c.settle()
	rss1, heap1, stack1 := c.rss(), c.metric("go_memstats_heap_inuse_bytes"), c.metric("go_memstats_stack_inuse_bytes")
	conns := c.metric("gatehouse_relay_connections")
	goroutines := c.metric("go_goroutines")
	fmt.Printf("idle sockets: %d open (relay says %.0f, %.0f goroutines)\n", len(socks), conns, goroutines)
	fmt.Printf("  relay RSS %.1f MiB -> %.1f MiB after a GC: %.2f KiB per socket (%.2f KiB before that GC)\n", mib(rss0), mib(rss1),
		float64(rss1-rss0)/1024/float64(len(socks)), float64(rssLive-rss0)/1024/float64(len(socks)))
	fmt.Printf("  Go heap in use %.2f KiB + stacks %.2f KiB per socket\n", (heap1-heap0)/1024/float64(len(socks)), (stack1-stack0)/1024/float64(len(socks)))
	for _, s := range socks {
		s.Close()
	}
	time.Sleep(2 * time.Second)
	return float64(rss1-rss0) / 1024 / float64(len(socks)), nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// aeadSpeed is seal+open of 64 KiB with XChaCha20-Poly1305, in MB/s.
func aeadSpeed() (float64, error) {
	key := make([]byte, 32)
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return 0, err
	}
	msg := make([]byte, 64<<10)
	nonce := make([]byte, chacha20poly1305.NonceSizeX)
	buf := make([]byte, 0, len(msg)+16)
	start := time.Now()
	n := 0
	for time.Since(start) < time.Second {
		ct := aead.Seal(buf[:0], nonce, msg, nil)
		if _, err := aead.Open(ct[:0], nonce, ct, nil); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n*len(msg)) / time.Since(start).Seconds() / 1e6, nil
}

// forward runs pairs of sockets, the first of each sending to the second:
// as fast as TCP allows for one phase (throughput), then, with latency, at
// half that rate. binary sends protocol 2's binary frames.
func forward(cs []*child, accounts [][]dev, size int, phase time.Duration, latency, binary bool) (phaseResult, error) {
	type pair struct{ a, b *websocket.Conn }
	var ps []pair
	var res phaseResult
	sender, receiver := cs[0], cs[len(cs)-1]
	cpu := func() (d time.Duration) {
		for _, c := range cs {
			d += c.cpu()
		}
		return d
	}
	for _, acct := range accounts {
		a, err := dial(sender.addr, acct[0])
		if err != nil {
			return res, err
		}
		b, err := dial(receiver.addr, acct[1])
		if err != nil {
			return res, err
		}
		ps = append(ps, pair{a, b})
	}
	defer func() {
		for _, p := range ps {
			p.a.Close()
			p.b.Close()
		}
	}()
	time.Sleep(time.Second) // presence reaches both nodes: the receivers are online everywhere
	var received, bytesIn, undeliverable atomic.Int64
	var latMu sync.Mutex
	var lats []time.Duration
	measuring := atomic.Bool{}
	for i, p := range ps {
		to := accounts[i][1].id
		_ = to
		go func() { // the receiver
			for {
				_, r, err := p.b.NextReader()
				if err != nil {
					return
				}
				data, _ := io.ReadAll(r)
				var stamp []byte
				if f, err := relay.ParseBinaryFrame(data); err == nil {
					stamp = f.Body[:min(19, len(f.Body))]
				} else if i := bytes.Index(data, []byte(`"body":"`)); i >= 0 {
					stamp = data[i+8 : i+8+19]
				} else {
					continue
				}
				received.Add(1)
				bytesIn.Add(int64(len(data)))
				if measuring.Load() {
					ts, _ := strconv.ParseInt(string(stamp), 10, 64)
					latMu.Lock()
					lats = append(lats, time.Duration(time.Now().UnixNano()-ts))
					latMu.Unlock()
				}
			}
		}()
		go func() { // the sender reads what the relay tells it
			for {
				_, data, err := p.a.ReadMessage()
				if err != nil {
					return
				}
				if bytes.Contains(data, []byte("undeliverable")) {
					undeliverable.Add(1)
				}
			}
		}()
	}
	typ := websocket.TextMessage
	if binary {
		typ = websocket.BinaryMessage
	}
	frame := func(to string) []byte {
		body := strconv.FormatInt(time.Now().UnixNano(), 10) + strings.Repeat("A", size-19)
		if binary {
			return relay.AppendBinary(nil, "", to, "", []byte(body))
		}
		return []byte(`{"to":"` + to + `","body":"` + body + `"}`)
	}
	blast := func(d time.Duration, rate float64) {
		var wg sync.WaitGroup
		stop := time.Now().Add(d)
		for i, p := range ps {
			to := accounts[i][1].id
			wg.Add(1)
			go func() {
				defer wg.Done()
				var tick *time.Ticker
				if rate > 0 {
					tick = time.NewTicker(time.Duration(float64(time.Second) / rate))
					defer tick.Stop()
				}
				for time.Now().Before(stop) {
					if tick != nil {
						<-tick.C
					}
					if err := p.a.WriteMessage(typ, frame(to)); err != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	cpu0, got0, bytes0 := cpu(), received.Load(), bytesIn.Load()
	t0 := time.Now()
	blast(phase, 0)
	time.Sleep(300 * time.Millisecond) // what is in flight arrives
	elapsed := time.Since(t0)
	cpu1, got1, bytes1 := cpu(), received.Load(), bytesIn.Load()
	frames := got1 - got0
	rate := float64(frames) / phase.Seconds()
	mb := float64(bytes1-bytes0) / 1e6
	form := "text"
	if binary {
		form = "binary"
	}
	fmt.Printf("%s frames: ", form)
	fmt.Printf("%d pairs, %d B bodies, unthrottled for %v: %.0f frames/s, %.1f MB/s forwarded; %d undeliverable (a receiver's queue full)\n",
		len(ps), size, phase, rate, mb/phase.Seconds(), undeliverable.Load())
	used := cpu1 - cpu0
	fmt.Printf("  relay CPU %.2f s over %.2f s: %.1f µs per frame, %.0f µs per MB\n", used.Seconds(), elapsed.Seconds(),
		float64(used.Microseconds())/float64(frames), float64(used.Microseconds())/mb)
	res = phaseResult{frames: rate, mbps: mb / phase.Seconds(), cpuPerMB: float64(used.Microseconds()) / mb}
	if !latency {
		return res, nil
	}
	measuring.Store(true)
	blast(phase, rate/2/float64(len(ps)))
	time.Sleep(300 * time.Millisecond)
	latMu.Lock()
	defer latMu.Unlock()
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	if len(lats) == 0 {
		return res, fmt.Errorf("no latencies measured")
	}
	fmt.Printf("  at half that rate (%.0f frames/s offered, %d measured): latency p50 %v, p99 %v\n", rate/2, len(lats),
		lats[len(lats)/2].Round(time.Microsecond), lats[len(lats)*99/100].Round(time.Microsecond))
	res.p50, res.p99 = lats[len(lats)/2].Round(time.Microsecond), lats[len(lats)*99/100].Round(time.Microsecond)
	return res, nil
}
