// Package link joins the request protocol to a relay: a host answering
// devices through it (gatehouse serve --relay), and a device calling a host
// through it (gatehouse call --relay). The relay client moves sealed bodies;
// the rpc package seals, opens, checks replay and dispatches. Nothing here
// decides access: the host's grants (bound to each device's key
// fingerprint) and its dispatch do.
package link

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// peers turns presence into the host's device list.
func peers(devs []relay.Device) []peer {
	out := make([]peer, 0, len(devs))
	for _, d := range devs {
		if key, err := base64.StdEncoding.DecodeString(d.PublicKey); err == nil {
			out = append(out, peer{ID: d.ID, PublicKey: key})
		}
	}
	return out
}

// Serve answers devices through the relay the identity signed in to with
// host, until ctx ends or the device is signed out. host's events go to
// the relay: Serve refuses (rpc.ErrEventSinkSet) a host whose events
// already go elsewhere. The host's grants are the caller's (a trust.Store,
// bound to each device's key fingerprint).
func Serve(ctx context.Context, id *relay.Identity, host *rpc.Host, logger *slog.Logger) error {
	key, err := id.Key()
	if err != nil {
		return err
	}
	if logger == nil {
		logger = slog.Default()
	}
	hl := newHostLink(host, key, id.Profile().DeviceID, logger)
	client := relay.NewClient(relay.ClientOptions{Identity: id, Host: true, Logger: logger,
		OnFrame:    hl.Frame,
		OnBinary:   hl.Binary,
		OnPresence: func(devs []relay.Device) { hl.Presence(peers(devs)) },
	})
	// Both before the client runs: no frame, presence or event reaches hl
	// before it can send.
	hl.send = func(to, ref string, f rpc.Frame) error {
		if f.Binary {
			return client.SendBinary(to, ref, f.Body)
		}
		return client.Send(to, ref, string(f.Body))
	}
	hl.carries = client.Binary
	if err := host.AttachEvents(hl.Event); err != nil {
		return err
	}
	return client.Run(ctx)
}

// ErrHostNotPresent: the host is not on the account, or not online.
var ErrHostNotPresent = refusal.New(refusal.Retry, "host not in presence", "That computer is not connected to the relay.")

// Device is a device's connection to one host through the relay.
type Device struct {
	client *relay.Client
	caller *rpc.Caller
	hostID string
	keys   *rpc.KeyCache
	myID   string
	cancel context.CancelFunc
	done   chan struct{}
	runErr error
	pin    atomic.Pointer[string] // the host key's fingerprint accepted at DialPinned
	first  bool
}

// DialPinned connects to the relay and to host hostID, which must be
// online, and checks the host's key against the identity's pin (trust on
// first use), or against want when the person gave a fingerprint. Every
// request is checked again before it is sealed, so a key that changes in
// presence later gets nothing either (*relay.HostKeyError).
func DialPinned(ctx context.Context, id *relay.Identity, hostID, want string, logger *slog.Logger) (*Device, error) {
	return dialPinned(ctx, id, hostID, want, logger, true)
}

// dialPinned is DialPinned; frames false makes a device that speaks
// protocol 1 only, as one before protocol 2 (for tests of the two side by
// side).
func dialPinned(ctx context.Context, id *relay.Identity, hostID, want string, logger *slog.Logger, frames bool) (*Device, error) {
	key, err := id.Key()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	d := &Device{hostID: hostID, myID: id.Profile().DeviceID, done: make(chan struct{})}
	d.keys = rpc.NewKeyCache(key, d.myID)
	d.client = relay.NewClient(relay.ClientOptions{Identity: id, Logger: logger,
		OnFrame: func(from, body string) {
			if from == hostID {
				d.caller.Deliver(body)
			}
		},
		OnBinary: func(from string, body []byte) {
			if from == hostID {
				d.caller.DeliverFrame(body)
			}
		},
		OnUndeliverable: func(to, ref, _ string) {
			if to == hostID {
				d.caller.Undeliverable(ref)
			}
		},
	})
	d.caller = rpc.NewCaller(rpc.CallerOptions{
		CheckHost: d.checkPin,
		Seal: func(plain []byte) string {
			k, err := d.hostKey()
			if err != nil {
				return "" // the host left presence: the relay will find no one to open it
			}
			return rpc.Seal(k, plain, rpc.RelayAAD(d.myID, hostID))
		},
		Open: func(body string) ([]byte, error) {
			k, err := d.hostKey()
			if err != nil {
				return nil, err
			}
			return rpc.Open(k, body, rpc.RelayAAD(hostID, d.myID))
		},
		Send: func(_ context.Context, ref, body string) error {
			if body == "" {
				return ErrHostNotPresent
			}
			return d.client.Send(hostID, ref, body)
		},
		// Protocol 2 while the relay forwards binary frames: announced in
		// every request, spoken once the host has shown it reads them.
		Frames: &rpc.FrameOptions{
			Carries: func() bool { return frames && d.client.Binary() },
			Seal: func(plain []byte) ([]byte, error) {
				k, err := d.hostKey()
				if err != nil {
					return nil, err
				}
				return rpc.SealFrame(k, plain, rpc.RelayAAD(d.myID, hostID)), nil
			},
			Open: func(frame []byte) ([]byte, error) {
				k, err := d.hostKey()
				if err != nil {
					return nil, err
				}
				return rpc.OpenFrame(k, frame, rpc.RelayAAD(hostID, d.myID))
			},
			Send: func(_ context.Context, ref string, frame []byte) error {
				return d.client.SendBinary(hostID, ref, frame)
			},
		},
	})
	runCtx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go func() {
		d.runErr = d.client.Run(runCtx)
		close(d.done)
	}()
	wctx, stop := context.WithCancel(ctx)
	go func() { // a client that signs out stops waiting at once
		select {
		case <-d.done:
		case <-wctx.Done():
		}
		stop()
	}()
	err = d.client.WaitConnected(wctx)
	stop()
	if err != nil {
		d.Close()
		if errors.Is(d.runErr, relay.ErrSignedOut) {
			return nil, d.runErr
		}
		return nil, err
	}
	hk, err := d.waitForHost(ctx)
	if err == nil {
		var pin string
		pin, d.first, err = id.CheckHostKey(hostID, hk, want)
		d.pin.Store(&pin)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// hostWait is how long DialPinned waits for the host to come online: a computer
// whose serve is starting, or reconnecting after a network change, is back
// within a few seconds.
const hostWait = 5 * time.Second

// waitForHost waits (up to hostWait, or ctx) for the host to be online in
// presence and returns its key.
func (d *Device) waitForHost(ctx context.Context) ([]byte, error) {
	deadline := time.Now().Add(hostWait)
	for {
		key, err := d.presenceKey()
		if err == nil || time.Now().After(deadline) {
			return key, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-d.done:
			return nil, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// HostFingerprint is the host key's fingerprint, and whether this DialPinned
// pinned it for the first time (to show the person, who compares it with
// what the computer printed).
func (d *Device) HostFingerprint() (fp string, first bool) { return d.pinned(), d.first }

func (d *Device) pinned() string {
	if p := d.pin.Load(); p != nil {
		return *p
	}
	return ""
}

// checkPin refuses a host whose key in presence is not the pinned one.
func (d *Device) checkPin() error {
	key, err := d.presenceKey()
	if err != nil {
		return nil // not present: Seal finds no key and nothing is sent
	}
	if fp := trust.Fingerprint(key); fp != d.pinned() {
		return &relay.HostKeyError{Host: d.hostID, Pinned: d.pinned(), Shown: fp}
	}
	return nil
}

// presenceKey is the host's public key as presence shows it now; a host
// missing from presence, or offline, has none.
func (d *Device) presenceKey() ([]byte, error) {
	for _, p := range d.client.Presence() {
		if p.ID == d.hostID && p.Online {
			key, err := base64.StdEncoding.DecodeString(p.PublicKey)
			if err != nil {
				break
			}
			return key, nil
		}
	}
	return nil, ErrHostNotPresent
}

// hostKey is the pair key for the host's key as presence shows it now,
// refused when it is not the pinned key.
func (d *Device) hostKey() (rpc.Key, error) {
	key, err := d.presenceKey()
	if err != nil {
		return rpc.Key{}, err
	}
	if pin := d.pinned(); pin != "" && trust.Fingerprint(key) != pin {
		return rpc.Key{}, &relay.HostKeyError{Host: d.hostID, Pinned: pin, Shown: trust.Fingerprint(key)}
	}
	return d.keys.Get(d.hostID, key)
}

// Call calls method on the host, waiting at most wait.
func (d *Device) Call(ctx context.Context, method string, params any, wait time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return d.caller.Call(ctx, method, params)
}

// CallOnce calls a once-method with the sendId retry rule.
func (d *Device) CallOnce(ctx context.Context, method string, params map[string]any, wait time.Duration) ([]byte, error) {
	return d.caller.CallOnce(ctx, method, params, wait)
}

// Close ends the connection and waits for the client to stop.
func (d *Device) Close() {
	d.cancel()
	<-d.done
}
