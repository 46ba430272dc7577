package link

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/fsguard"
	"github.com/gatehouse/gatehouse/gate"
	"github.com/gatehouse/gatehouse/internal/gittest"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// A device removed from the account while its request waits in the host's
// ordered lane gets nothing run: the host checks presence again when the
// request starts (docs/relay.md, "What the relay can and cannot do"). Real
// relay on loopback, real host and device; the request log shows the queued
// request refused at its start (ACCESS), not dropped at arrival. Before the
// fix it ran.
func TestRemovedDevicesQueuedRequestDoesNotRun(t *testing.T) {
	gittest.Home(t, "")
	w := startRelay(t)
	hostID := w.signIn(t, t.TempDir(), "laptop")
	state, err := trust.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	release, started, ran := make(chan struct{}), make(chan struct{}, 1), make(chan struct{}, 1)
	reg := rpc.NewRegistry()
	type none struct{}
	for _, m := range []struct {
		name string
		h    func()
	}{
		{"test.block", func() { started <- struct{}{}; <-release }},
		{"test.push", func() { ran <- struct{}{} }}, // stands for git.push: a change in the ordered lane
	} {
		if err := rpc.Register(reg, rpc.Method{Name: m.name, Scope: trust.Control, Lane: rpc.LaneOrdered, Wait: 20 * time.Second},
			func(context.Context, *rpc.Call, none) (any, error) { m.h(); return "done", nil }); err != nil {
			t.Fatal(err)
		}
	}
	logDir := t.TempDir()
	reqLog, err := rpc.OpenRequestLog(logDir)
	if err != nil {
		t.Fatal(err)
	}
	targets := rpc.NewTargets(fsguard.Options{Home: "/nonexistent"}, gate.Options{})
	defer targets.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, hostID, hostOf(t, rpc.HostOptions{Registry: reg, Targets: targets, Grants: state, FullAccess: state.FullAccess, Log: reqLog}), nil)
	}()
	defer func() {
		close(release)
		cancel()
		<-served
		reqLog.Close()
	}()

	phoneID := w.signIn(t, t.TempDir(), "phone")
	if err := state.SetGrant(phoneID.Profile().DeviceID, trust.DeviceGrant{Grant: trust.Full,
		Fingerprint: trust.Fingerprint(publicKey(t, phoneID)), Name: "phone"}); err != nil {
		t.Fatal(err)
	}
	var dev *Device
	for deadline := time.Now().Add(10 * time.Second); ; {
		if dev, err = DialPinned(context.Background(), phoneID, hostID.Profile().DeviceID, "", nil); err == nil {
			break
		}
		if !errors.Is(err, ErrHostNotPresent) || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer dev.Close()

	go dev.Call(ctx, "test.block", nil, 20*time.Second)
	<-started
	go dev.Call(ctx, "test.push", nil, 20*time.Second)
	time.Sleep(300 * time.Millisecond) // test.push waits behind test.block
	// The person removes the phone from the account.
	if err := hostID.Call(ctx, http.DefaultClient, http.MethodDelete, "/v1/devices/"+phoneID.Profile().DeviceID, nil, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the host's next presence frame
	release <- struct{}{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case <-ran:
			t.Fatal("the removed device's queued request ran")
		default:
		}
		entries, _, _ := rpc.ReadLog(logDir)
		for _, e := range entries {
			if e.Method == "test.push" {
				if e.Code != string(rpc.CodeAccess) {
					t.Fatalf("test.push: %+v", e)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("test.push never answered: %+v", entries)
		}
	}
}
