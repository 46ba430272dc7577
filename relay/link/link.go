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
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/rpc"
)

// peers turns presence into the host's device list.
func peers(devs []relay.Device) []rpc.Peer {
	out := make([]rpc.Peer, 0, len(devs))
	for _, d := range devs {
		if key, err := base64.StdEncoding.DecodeString(d.PublicKey); err == nil {
			out = append(out, rpc.Peer{ID: d.ID, PublicKey: key})
		}
	}
	return out
}

// Serve answers devices through the relay the identity signed in to, with a
// host built from ho, until ctx ends or the device is signed out.
func Serve(ctx context.Context, id *relay.Identity, ho rpc.HostOptions, logger *slog.Logger) error {
	key, err := id.Key()
	if err != nil {
		return err
	}
	if logger == nil {
		logger = slog.Default()
	}
	var rh *rpc.RelayHost
	var ready sync.WaitGroup
	ready.Add(1)
	ho.Events = func(dev string, ev rpc.Event) {
		ready.Wait()
		rh.Event(dev, ev)
	}
	host := rpc.NewHost(ho)
	defer host.Close()
	client := relay.NewClient(relay.ClientOptions{Identity: id, Host: true, Logger: logger,
		OnFrame:    func(from, body string) { rh.Frame(from, body) },
		OnPresence: func(devs []relay.Device) { rh.Presence(peers(devs)) },
	})
	rh = rpc.NewRelayHost(rpc.RelayHostOptions{Host: host, Key: key, ID: id.Profile().DeviceID, Send: client.Send, Logger: logger})
	ready.Done()
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
}

// Dial connects to the relay and to host hostID, which must be online.
func Dial(ctx context.Context, id *relay.Identity, hostID string, logger *slog.Logger) (*Device, error) {
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
		OnUndeliverable: func(to, ref, _ string) {
			if to == hostID {
				d.caller.Undeliverable(ref)
			}
		},
	})
	d.caller = rpc.NewCaller(rpc.CallerOptions{
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
	if _, err := d.hostKey(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// hostKey is the pair key for the host's key as presence shows it now; a
// host missing from presence, or offline, has none.
func (d *Device) hostKey() (rpc.Key, error) {
	for _, p := range d.client.Presence() {
		if p.ID == d.hostID && p.Online {
			key, err := base64.StdEncoding.DecodeString(p.PublicKey)
			if err != nil {
				break
			}
			return d.keys.Get(p.ID, key)
		}
	}
	return rpc.Key{}, ErrHostNotPresent
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
