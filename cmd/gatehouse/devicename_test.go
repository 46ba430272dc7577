package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// A device named by another device's id read as that device in every list
// ("lan-A (lan-B)"): devices name refuses such a name, for LAN and relay
// ids alike, and still takes a device's own id or an ordinary name.
func TestDevicesNameRefusesAnotherDevicesID(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GATEHOUSE_HOME", home)
	store, err := trust.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := store.SaveLAN(trust.LANState{Devices: []trust.LANDevice{
		{ID: "lan-aaaaaaaaaaaa", Name: "phone", Grant: trust.View, Paired: now},
		{ID: "lan-bbbbbbbbbbbb", Name: "tablet", Grant: trust.Full, Paired: now},
	}}); err != nil {
		t.Fatal(err)
	}
	runIt := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args)
		return code, out.String() + errb.String()
	}
	if code, out := runIt("devices", "name", "lan-aaaaaaaaaaaa", "LAN-BBBBBBBBBBBB"); code != exitUsage || !strings.Contains(out, "is another device's id") {
		t.Fatalf("naming a device by another's id: exit %d\n%s", code, out)
	}
	if got := store.LAN().Devices[0].Name; got != "phone" {
		t.Fatalf("the refused name was kept: %q", got)
	}
	if code, out := runIt("devices", "name", "lan-aaaaaaaaaaaa", "my phone"); code != exitOK {
		t.Fatalf("an ordinary name: exit %d\n%s", code, out)
	}
	if got := store.LAN().Devices[0].Name; got != "my phone" {
		t.Fatalf("the new name is %q", got)
	}
}
