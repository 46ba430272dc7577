package lan

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/rpc"
)

// The device side of the LAN transport, for gatehouse call --lan: pair
// once through the link (the person at the computer allows it), then call
// with the device's own key.

// Paired is what a device keeps after pairing: the page's address, its id
// and its key. It is useless once that serve stops.
type Paired struct {
	Base     string  `json:"base"` // http://addr:port/
	DeviceID string  `json:"deviceId"`
	Key      rpc.Key `json:"key"`
	Grant    string  `json:"grant"`
}

// Link is a parsed pairing link.
type Link struct {
	Base string
	ID   string
	Key  rpc.Key
}

// ParseLink reads http://addr:port/#id.key.
func ParseLink(raw string) (Link, error) {
	u, err := url.Parse(raw)
	bad := fmt.Errorf("%q is not a gatehouse pairing link (http://address:port/#code)", raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return Link{}, bad
	}
	id, key, ok := strings.Cut(u.Fragment, ".")
	raw32, kerr := base64.RawURLEncoding.DecodeString(key)
	if !ok || id == "" || kerr != nil || len(raw32) != 32 {
		return Link{}, bad
	}
	var l Link
	l.Base, l.ID = "http://"+u.Host+"/", id
	copy(l.Key[:], raw32)
	return l, nil
}

// ErrRefused is a pairing the computer refused, with its sentence.
var ErrRefused = refusal.New(refusal.Refused, "pairing refused", "The computer did not pair this device.")

// Pair says hello through the link and waits (up to a minute) for the
// person at the computer.
func Pair(ctx context.Context, hc *http.Client, l Link, name string) (Paired, error) {
	return PairShowingCode(ctx, hc, l, name, nil)
}

// PairShowingCode is Pair that first hands show the request's pair code
// (PairCode), which the computer shows beside the request: the person
// compares the two before allowing it. show runs before the hello is sent.
func PairShowingCode(ctx context.Context, hc *http.Client, l Link, name string, show func(code string)) (Paired, error) {
	h, _ := json.Marshal(hello{Type: "hello", Name: name, TS: time.Now().UnixMilli(), Nonce: randomID(24)})
	frame := rpc.Seal(l.Key, h, helloAAD(l.ID, "host"))
	if show != nil {
		show(PairCode(l.ID, l.Key, frame))
	}
	body, _ := json.Marshal(map[string]string{"p": l.ID, "f": frame})
	out, err := post(ctx, hc, l.Base+"rc/hello", body)
	if err != nil {
		return Paired{}, err
	}
	plain, err := rpc.Open(l.Key, out, helloAAD(l.ID, "device"))
	var ans helloAnswer
	if err != nil || json.Unmarshal(plain, &ans) != nil || rpc.NewReplayGuard().Check(ans.TS, ans.Nonce) != nil {
		return Paired{}, errors.New("the computer's answer did not open")
	}
	if ans.Type != "paired" {
		return Paired{}, refusal.Errorf(ErrRefused, "%s", ans.Error)
	}
	raw, err := base64.RawURLEncoding.DecodeString(ans.DeviceKey)
	if err != nil || len(raw) != 32 {
		return Paired{}, errors.New("the computer's answer holds no key")
	}
	p := Paired{Base: l.Base, DeviceID: ans.DeviceID, Grant: ans.Grant}
	copy(p.Key[:], raw)
	return p, nil
}

// ErrNotPaired: the computer does not know this device (serve restarted,
// or it was unpaired).
var ErrNotPaired = refusal.New(refusal.Refused, "not paired", msgNotPaired)

// post sends a JSON body and returns the sealed "f" of the answer.
func post(ctx context.Context, hc *http.Client, u string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxCallBody))
	if err != nil {
		return "", err
	}
	var out struct {
		F     string `json:"f"`
		Error string `json:"error"`
	}
	_ = json.Unmarshal(data, &out)
	switch {
	case res.StatusCode == http.StatusForbidden && out.Error == msgNotPaired:
		return "", ErrNotPaired
	case res.StatusCode != http.StatusOK:
		if out.Error == "" {
			out.Error = res.Status
		}
		return "", refusal.Errorf(ErrRefused, "%s", out.Error)
	}
	return out.F, nil
}

// Conn is a device's caller to the host it is paired with.
type Conn struct {
	*rpc.Caller
	notPaired atomic.Bool
}

// NotPaired reports whether the host answered that it does not know this
// device (serve restarted, or it was unpaired): pair again.
func (c *Conn) NotPaired() bool { return c.notPaired.Load() }

// NewConn calls the host a device is paired with.
func NewConn(hc *http.Client, p Paired) *Conn {
	c := &Conn{}
	c.Caller = rpc.NewCaller(rpc.CallerOptions{
		Seal: func(plain []byte) string { return rpc.Seal(p.Key, plain, rpc.LANAAD(p.DeviceID, "host")) },
		Open: func(body string) ([]byte, error) { return rpc.Open(p.Key, body, rpc.LANAAD(p.DeviceID, "device")) },
		Send: func(ctx context.Context, ref, body string) error {
			js, _ := json.Marshal(map[string]string{"d": p.DeviceID, "f": body})
			go func() {
				out, err := post(ctx, hc, p.Base+"rc/call", js)
				var op *net.OpError
				switch {
				case err == nil:
					c.Deliver(out)
				case errors.As(err, &op) && op.Op == "dial", errors.Is(err, ErrNotPaired):
					c.notPaired.Store(errors.Is(err, ErrNotPaired))
					c.Undeliverable(ref) // it never reached the host's dispatch
				case errors.Is(err, ErrRefused):
					c.Undeliverable(ref) // refused before dispatch (a frame that did not open)
				default:
					c.Lost(ref) // it may have run
				}
			}()
			return nil
		},
	})
	return c
}
