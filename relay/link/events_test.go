package link

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/relay"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// A device that subscribes to a checkout through the relay hears
// checkout.changed when the checkout changes: the host seals the event for
// the device and sends it through a real relay on loopback, and the device
// opens it with its pair key. Before this test the whole path could be
// deleted (Serve not attaching the host link as the host's event sink, or
// the link not sending what the sink is given) with every test green, and a
// phone on the relay would never see a change it did not make.
//
// The device here is a relay client with an rpc.Caller, wired as Dial
// wires one but with OnEvent set (a Device drops events: gatehouse call has
// no use for them).
func TestEventsReachADeviceThroughTheRelay(t *testing.T) {
	gittest.Home(t, "")
	w := startRelay(t)
	repo := gittest.Init(t, map[string]string{"a.txt": "a\n"})
	hostID, state, target := serveRepo(t, w, repo)
	host := hostID.Profile().DeviceID

	phone := w.signIn(t, t.TempDir(), "phone")
	myID := phone.Profile().DeviceID
	key, err := phone.Key()
	if err != nil {
		t.Fatal(err)
	}
	if err := state.SetGrant(myID, trust.DeviceGrant{Grant: trust.View,
		Fingerprint: trust.Fingerprint(publicKey(t, phone)), Name: "phone"}); err != nil {
		t.Fatal(err)
	}

	hostOnline := make(chan []byte, 1)
	events := make(chan rpc.Event, 16)
	keys := rpc.NewKeyCache(key, myID)
	var caller *rpc.Caller
	client := relay.NewClient(relay.ClientOptions{Identity: phone,
		OnFrame: func(from, body string) {
			if from == host {
				caller.Deliver(body)
			}
		},
		OnPresence: func(devs []relay.Device) {
			for _, d := range devs {
				if d.ID == host && d.Online {
					if k, err := base64.StdEncoding.DecodeString(d.PublicKey); err == nil {
						select {
						case hostOnline <- k:
						default:
						}
					}
				}
			}
		},
	})
	hostKey := make(chan rpc.Key, 1)
	pairKey := func() (rpc.Key, error) {
		k := <-hostKey
		hostKey <- k
		return k, nil
	}
	caller = rpc.NewCaller(rpc.CallerOptions{
		Seal: func(plain []byte) string {
			k, _ := pairKey()
			return rpc.Seal(k, plain, rpc.RelayAAD(myID, host))
		},
		Open: func(body string) ([]byte, error) {
			k, _ := pairKey()
			return rpc.Open(k, body, rpc.RelayAAD(host, myID))
		},
		Send: func(_ context.Context, ref, body string) error { return client.Send(host, ref, body) },
		OnEvent: func(ev rpc.Event) {
			select {
			case events <- ev:
			default:
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { _ = client.Run(ctx); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran })

	// Wait for the host in presence (a state, with a bound only for failure).
	select {
	case pub := <-hostOnline:
		k, err := keys.Get(host, pub)
		if err != nil {
			t.Fatal(err)
		}
		hostKey <- k
	case <-time.After(20 * time.Second):
		t.Fatal("the host never showed online in the phone's presence")
	}

	callCtx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	if _, err := caller.Call(callCtx, "subscribe", map[string]any{"targets": []string{target.ID}}); err != nil {
		t.Fatalf("subscribe through the relay: %v", err)
	}
	gittest.Write(t, repo, map[string]string{"b.txt": "b\n"})

	select {
	case ev := <-events:
		var data struct {
			Target string `json:"target"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil || ev.Name != "checkout.changed" || data.Target != target.ID {
			t.Fatalf("the phone heard %s %s, want checkout.changed for %s", ev.Name, ev.Data, target.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a change to a subscribed checkout never reached the phone through the relay")
	}
}
