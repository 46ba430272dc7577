package lan

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// The attacks a black-box red team made on the LAN link, each first shown
// working without the rule that stops it (a ...ForTest switch puts the old
// behaviour back), then stopped. docs/lan.md has the threat model.

// recorded is one HTTP exchange, as a listener on the network
// sees it.
type recorded struct {
	url      string
	header   http.Header
	request  []byte
	response []byte
}

// recorder is a transport that keeps a copy of everything that crosses it.
type recorder struct {
	mu  sync.Mutex
	all []recorded
	rt  http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	res, err := r.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	var out []byte
	if res.Header.Get("Content-Type") != "text/event-stream" { // a stream lasts: its request is what a replay needs
		out, _ = io.ReadAll(res.Body)
		res.Body = io.NopCloser(bytes.NewReader(out))
	}
	r.mu.Lock()
	r.all = append(r.all, recorded{url: req.URL.String(), header: req.Header.Clone(), request: body, response: out})
	r.mu.Unlock()
	return res, nil
}

func (r *recorder) recording() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.all...)
}

func recordingClient(t *testing.T) (*http.Client, *recorder) {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rec := &recorder{rt: tr}
	return &http.Client{Timeout: time.Minute, Transport: rec}, rec
}

// strings of a recording: every JSON string value in its bodies and every
// query value in its addresses: where a sealed frame or a key could be.
func blobs(rec []recorded) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, e := range rec {
		for _, b := range [][]byte{e.request, e.response} {
			var v any
			if json.Unmarshal(b, &v) == nil {
				walk(v)
			}
		}
		if u, err := url.Parse(e.url); err == nil {
			for _, vs := range u.Query() {
				out = append(out, vs...)
			}
		}
	}
	return out
}

// attacker is what a listener holding the link can try with a recording:
// open every blob with the link key under every label the protocol uses,
// take every 32 bytes it finds in what opened (or in the clear) as a
// candidate secret, resume with each as every device seen, and, given a
// session, read .env.
type attacker struct {
	link    Link
	opened  int
	secrets []rpc.Key
	devices []string
}

func (a *attacker) study(rec []recorded) {
	labels := []string{"link:" + a.link.ID}
	var found [][]byte
	for _, b := range blobs(rec) {
		if strings.HasPrefix(b, "lan-") && !strings.Contains(strings.Join(a.devices, " "), b) {
			a.devices = append(a.devices, b)
		}
		found = append(found, []byte(b))
		for _, l := range labels {
			for _, dir := range []string{"host", "device"} {
				if plain, err := rpc.Open(a.link.Key, b, pairAAD(l, dir)); err == nil {
					a.opened++
					found = append(found, plain)
				}
			}
		}
	}
	for _, f := range found {
		var v any
		cands := [][]byte{f}
		if json.Unmarshal(f, &v) == nil {
			for _, s := range blobs([]recorded{{request: f}}) {
				cands = append(cands, []byte(s))
			}
		}
		for _, c := range cands {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
				if raw, err := enc.DecodeString(string(c)); err == nil && len(raw) == 32 {
					var k rpc.Key
					copy(k[:], raw)
					a.secrets = append(a.secrets, k)
				}
			}
			if len(c) == 32 {
				var k rpc.Key
				copy(k[:], c)
				a.secrets = append(a.secrets, k)
			}
		}
	}
}

// readEnv tries every candidate secret as every device seen, and reads
// .env with the first session it gets.
func (a *attacker) readEnv(t *testing.T, f *fixture) (string, bool) {
	t.Helper()
	for _, d := range a.devices {
		for _, k := range a.secrets {
			p := &Paired{Base: a.link.Base, DeviceID: d, Stored: k}
			se, err := Resume(context.Background(), clientFrom("127.0.0.3"), p)
			if err != nil {
				continue
			}
			out, err := se.Conn().Call(context.Background(), "files.read", map[string]string{"target": f.target, "path": ".env"})
			if err == nil {
				return string(out), true
			}
		}
	}
	return "", false
}

// A photo of the QR code and a recording of the whole pairing, and of the
// calls after it, open nothing: gatehouse used to send the device's key
// sealed only with the link key, and a listener holding the link took it
// and read .env as the phone. With the key sent so (the switch), the same
// attacker reads .env; with keys agreed, it opens no frame past the first
// two (public keys and a commitment) and no resume.
func TestARecordingAndTheLinkOpenNothing(t *testing.T) {
	for _, leak := range []bool{true, false} {
		t.Run(map[bool]string{true: "key sent under the link", false: "keys agreed"}[leak], func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.leakStoredUnderLinkForTest = leak })
			link, _ := ParseLink(f.srv.Pairing().Link()) // the photo
			hc, rec := recordingClient(t)
			p, err := f.pairThrough(t, hc, link, "Safari on iPhone", trust.Full)
			if err != nil {
				t.Fatal(err)
			}
			se, err := Resume(context.Background(), hc, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := se.Conn().Call(context.Background(), "files.read", map[string]string{"target": f.target, "path": ".env"}); err != nil {
				t.Fatal(err)
			}
			a := &attacker{link: link}
			a.study(rec.recording())
			env, ok := a.readEnv(t, f)
			t.Logf("the listener opened %d frames with the link key, found %d candidate secrets for %v", a.opened, len(a.secrets), a.devices)
			if leak {
				if !ok || !strings.Contains(env, "TOKEN=1") {
					t.Fatal("the attack did not work with the key sent under the link key: the test proves nothing")
				}
				return
			}
			if ok {
				t.Fatalf("a listener with the link and a recording read .env: %s", env)
			}
			if a.opened != 2 {
				t.Fatalf("the listener opened %d frames with the link key; only the start and the offer (public keys) are sealed with it", a.opened)
			}
		})
	}
}

// squatter listens on addr (serve's kept port, serve stopped) and records
// what the page's open tab sends it while serve is away.
func squatter(t *testing.T, addr string) (*recorder, func()) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the squatter could not take %s: %v", addr, err)
	}
	rec := &recorder{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.all = append(rec.all, recorded{url: r.URL.String(), header: r.Header.Clone(), request: body})
		rec.mu.Unlock()
		http.Error(w, "not here", http.StatusServiceUnavailable)
	})}
	go srv.Serve(l)
	return rec, func() { _ = srv.Close() }
}

// A squatter on the kept port while serve is stopped reads everything the
// page's origin stores (its device id and stored secret) and everything a
// tab left open sends there; after serve comes back, none of it opens
// anything. The stored secret is good only in the run that gave it, so the
// thief is asked to reconnect, which the person refuses (no phone shows its
// code); the tab's recorded resumes were stamped before serve started. The
// tab that stayed open resumes with the ticket it held in memory, and the
// stored secret changes under it. Accepting a stored secret from an earlier
// run (the switch, as before) lets the thief read .env.
func TestASquatterGetsNothing(t *testing.T) {
	for _, across := range []bool{true, false} {
		t.Run(map[bool]string{true: "stored secret good across runs", false: "stored secret good for its run"}[across], func(t *testing.T) {
			gittest.Home(t, "")
			repo := gittest.Init(t, map[string]string{"a.txt": "a\n", ".env": "TOKEN=1\n"})
			store := newStore(t)
			keep := func(o *Options) { o.Keep, o.storedAcrossRunsForTest = store, across }
			f, stop := serveRepo(t, repo, keep)
			addr := f.srv.hostport
			p, err := f.pair(t, trust.Full)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.call(t, p, "host.hello", nil); err != nil {
				t.Fatal(err)
			}
			storage := Paired{Base: p.Base, DeviceID: p.DeviceID, Stored: p.Stored} // what the origin stores: no ticket
			stop()

			rec, leave := squatter(t, addr)
			openTab := *p // the open tab, trying to come back while serve is away (on a connection of its own: the old one died with serve)
			_, _ = Resume(context.Background(), clientFrom("127.0.0.1"), &openTab)
			leave()

			f, _ = serveRepo(t, repo, keep)
			if f.srv.hostport != addr {
				t.Fatalf("serve came back at %s, not its kept %s", f.srv.hostport, addr)
			}
			thief := clientFrom("127.0.0.3")
			loot := storage
			se, err := Resume(context.Background(), thief, &loot)
			if across {
				if err != nil {
					t.Fatalf("the attack did not work with the stored secret good across runs: %v", err)
				}
				out, err := se.Conn().Call(context.Background(), "files.read", map[string]string{"target": f.target, "path": ".env"})
				if err != nil || !strings.Contains(string(out), "TOKEN=1") {
					t.Fatalf("the thief's session did not read .env: %s %v", out, err)
				}
				return
			}
			if !errors.Is(err, ErrRestarted) {
				t.Fatalf("the squatter's stored secret after the restart: %v", err)
			}
			for _, e := range rec.recording() {
				res, err := thief.Post(f.srv.URL()+strings.TrimPrefix(e.url, "/"), "application/json", bytes.NewReader(e.request))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					t.Fatalf("a resume the open tab sent the squatter was answered after the restart: %s", body)
				}
			}
			if len(rec.recording()) == 0 {
				t.Fatal("the open tab sent the squatter nothing: the replay proves nothing")
			}
			// The thief asks to reconnect; the person sees a request whose code
			// no phone in their hand shows, and denies it.
			codes := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				_, err := Reconnect(context.Background(), thief, loot, "Safari on iPhone", func(c string) { codes <- c })
				done <- err
			}()
			<-codes
			reqs := waitRequests(t, f.srv.Pairing(), 1)
			if reqs[0].Kind != KindReconnect || reqs[0].Device != p.DeviceID {
				t.Fatalf("request: %+v", reqs[0])
			}
			if err := f.srv.Pairing().Decide(reqs[0].ID, false, trust.None); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err == nil {
				t.Fatal("a denied reconnect paired the thief")
			}
			// The tab that stayed open comes back with its ticket, and the
			// stored secret it had is spent.
			before := openTab.Stored
			if _, err := f.call(t, &openTab, "host.hello", nil); err != nil {
				t.Fatalf("the open tab after the restart: %v", err)
			}
			if openTab.Stored == before {
				t.Fatal("the stored secret did not change at the first resume of the run")
			}
			if _, err := Resume(context.Background(), thief, &loot); !errors.Is(err, ErrRestarted) && !errors.Is(err, ErrNotPaired) {
				t.Fatalf("the loot after the tab came back: %v", err)
			}
		})
	}
}

// A squatter that keeps the kept port while serve restarts is refused the
// silent move it used to get: serve does not start, and says why. If the
// person then serves on another port (as the sentence offers), the squatter
// could relay a reconnect: the page the phone reloads at the old address is
// the squatter's, which asks the real serve to reconnect with the stored
// secret it read and shows the phone the code, so the codes match and the
// person allows it. A reconnect is therefore taken only at the address the
// device paired at: with that check off the relay pairs the thief, with it
// the reconnect is refused before anyone is asked.
func TestASquatterCannotRelayAReconnect(t *testing.T) {
	for _, off := range []bool{true, false} {
		t.Run(map[bool]string{true: "origin check off", false: "origin check on"}[off], func(t *testing.T) {
			gittest.Home(t, "")
			repo := gittest.Init(t, map[string]string{"a.txt": "a\n", ".env": "TOKEN=1\n"})
			store := newStore(t)
			keep := func(o *Options) { o.Keep, o.originCheckOffForTest = store, off }
			f, stop := serveRepo(t, repo, keep)
			addr := f.srv.hostport
			p, err := f.pair(t, trust.Full)
			if err != nil {
				t.Fatal(err)
			}
			loot := Paired{Base: p.Base, DeviceID: p.DeviceID, Stored: p.Stored}
			stop()
			_, leave := squatter(t, addr) // stays while serve restarts
			defer leave()
			_, err = Listen(Options{Addr: netip.MustParseAddr("127.0.0.1"), Kind: Loopback, Keep: store}, rpc.HostOptions{})
			if !errors.Is(err, ErrKeptPortTaken) || !strings.Contains(refusal.Sentence(err), addr) {
				t.Fatalf("serve with its kept port taken: %v", err)
			}
			f, _ = serveRepo(t, repo, func(o *Options) { keep(o); o.Port = freePort(t) }) // --port N
			if f.srv.hostport == addr {
				t.Fatal("serve took the squatter's port")
			}
			// The squatter's server relays to serve's new address.
			relayed := loot
			relayed.Base = f.srv.URL()
			shownOnThePhone := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				back, err := Reconnect(context.Background(), clientFrom("127.0.0.3"), relayed, "Safari on iPhone", func(c string) { shownOnThePhone <- c })
				if err == nil {
					var se *Session
					if se, err = Resume(context.Background(), clientFrom("127.0.0.3"), &back); err == nil {
						_, err = se.Conn().Call(context.Background(), "files.read", map[string]string{"target": f.target, "path": ".env"})
					}
				}
				done <- err
			}()
			if off {
				code := <-shownOnThePhone
				reqs := waitRequests(t, f.srv.Pairing(), 1)
				if reqs[0].Code != code {
					t.Fatalf("the relayed codes differ: %s and %s", code, reqs[0].Code)
				}
				if err := f.srv.Pairing().Decide(code, true, trust.None); err != nil { // the codes match: the person allows
					t.Fatal(err)
				}
				if err := <-done; err != nil {
					t.Fatalf("the attack did not work with the origin check off: %v", err)
				}
				return
			}
			if err := <-done; !errors.Is(err, ErrMoved) {
				t.Fatalf("a reconnect relayed to another address: %v", err)
			}
			if st, _ := f.srv.Pairing().Status(); len(st.Requests) != 0 {
				t.Fatalf("the person was asked: %+v", st.Requests)
			}
		})
	}
}

// freePort is a port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Nothing recorded replays after a restart: a sealed git.discard, the
// resume that opened its session and an event stream's opener, recorded on
// the wire, are refused by the next run (its sessions are its own), and the
// file stays as it was. (Before sessions, device keys outlived a restart
// and the replay memory did not: the same recording wiped new work.)
func TestNothingRecordedReplaysAfterARestart(t *testing.T) {
	gittest.Home(t, "")
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	store := newStore(t)
	keep := func(o *Options) { o.Keep = store }
	f, stop := serveRepo(t, repo, keep)
	p, err := f.pair(t, trust.Control)
	if err != nil {
		t.Fatal(err)
	}
	hc, rec := recordingClient(t)
	se, err := Resume(context.Background(), hc, p)
	if err != nil {
		t.Fatal(err)
	}
	events, err := hc.Get(se.EventsURL())
	if err != nil || events.StatusCode != http.StatusOK {
		t.Fatalf("events: %v %v", events, err)
	}
	defer events.Body.Close()
	gittest.Write(t, repo, map[string]string{"a.txt": "first edit\n"})
	if _, err := se.Conn().Call(context.Background(), "git.discard", map[string]any{"target": f.target, "paths": []string{"a.txt"}}); err != nil {
		t.Fatal(err)
	}
	stop()
	f, _ = serveRepo(t, repo, keep)
	gittest.Write(t, repo, map[string]string{"a.txt": "new work\n"})
	replayed := 0
	for _, e := range rec.recording() {
		req, _ := http.NewRequest(http.MethodPost, e.url, bytes.NewReader(e.request))
		if strings.Contains(e.url, "rc/events") {
			req, _ = http.NewRequest(http.MethodGet, e.url, nil)
		}
		req.Header = e.header.Clone()
		res, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
		res.Body.Close()
		replayed++
		if res.StatusCode == http.StatusOK {
			t.Fatalf("a recorded %s was answered after the restart: %s", e.url, body)
		}
	}
	if replayed < 3 {
		t.Fatalf("only %d exchanges were recorded", replayed)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "new work\n" {
		t.Fatalf("a.txt after the replay: %q", b)
	}
}
