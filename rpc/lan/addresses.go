package lan

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"

	"github.com/gatehouse/gatehouse/internal/refusal"
)

// Kind says what sort of address serve listens on.
type Kind string

const (
	Tailscale Kind = "tailscale"
	LAN       Kind = "lan"
	Loopback  Kind = "loopback"
)

// Iface is a network interface as address choice sees it. Tests pass
// their own list: they must never bind or connect to a private-range or
// Tailscale address.
type Iface struct {
	Name  string
	Up    bool
	Addrs []netip.Addr
}

// SystemInterfaces lists this computer's interfaces.
func SystemInterfaces() ([]Iface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]Iface, 0, len(ifs))
	for _, i := range ifs {
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		f := Iface{Name: i.Name, Up: i.Flags&net.FlagUp != 0}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				f.Addrs = append(f.Addrs, p.Addr().Unmap())
			}
		}
		out = append(out, f)
	}
	return out, nil
}

var (
	tailnet6 = netip.MustParsePrefix("fd7a:115c:a1e0::/48")
	private4 = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16")}
	ula6     = netip.MustParsePrefix("fc00::/7")
	cgnat    = netip.MustParsePrefix("100.64.0.0/10")
)

// ErrNoAddress: nothing safe to listen on.
var ErrNoAddress = refusal.New(refusal.Refused, "no tailscale or private address",
	"This computer has no Tailscale or private LAN address to serve on. Join a Wi-Fi or LAN, start Tailscale, or use --listen loopback to try it on this computer.")

// isTailscaleIface: tailscale0 on Linux; on macOS a utun interface that
// carries an address of the tailnet's IPv6 range. An address in
// 100.64.0.0/10 alone proves nothing: that range is also carrier-grade NAT
// on phone hotspots and some ISPs.
func isTailscaleIface(f Iface) bool {
	if strings.HasPrefix(f.Name, "tailscale") {
		return true
	}
	if strings.HasPrefix(f.Name, "utun") || runtime.GOOS == "darwin" {
		for _, a := range f.Addrs {
			if tailnet6.Contains(a) {
				return true
			}
		}
	}
	return false
}

func isPrivate(a netip.Addr) bool {
	if a.Is4() {
		for _, p := range private4 {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return ula6.Contains(a) && !tailnet6.Contains(a)
}

// Pick chooses the address to listen on: mode is auto (a Tailscale
// address, else a private LAN one), tailscale, lan, loopback, or an
// explicit address, which must itself be one of those kinds. It never
// picks a public address or all interfaces.
func Pick(mode string, ifaces []Iface) (netip.Addr, Kind, error) {
	switch mode {
	case "loopback":
		return netip.MustParseAddr("127.0.0.1"), Loopback, nil
	case "auto", "":
		if a, ok := pickTailscale(ifaces); ok {
			return a, Tailscale, nil
		}
		if a, ok := pickLAN(ifaces); ok {
			return a, LAN, nil
		}
		return netip.Addr{}, "", ErrNoAddress
	case "tailscale":
		if a, ok := pickTailscale(ifaces); ok {
			return a, Tailscale, nil
		}
		return netip.Addr{}, "", refusal.New(refusal.Refused, "no tailscale address", "This computer has no Tailscale address. Start Tailscale, or use --listen lan.")
	case "lan":
		if a, ok := pickLAN(ifaces); ok {
			return a, LAN, nil
		}
		return netip.Addr{}, "", refusal.New(refusal.Refused, "no private address", "This computer has no private LAN address. Join a Wi-Fi or LAN, or use --listen tailscale.")
	}
	a, err := netip.ParseAddr(mode)
	if err != nil {
		return netip.Addr{}, "", fmt.Errorf("--listen takes auto, tailscale, lan, loopback or an address, not %q", mode)
	}
	return explicit(a.Unmap(), ifaces)
}

func explicit(a netip.Addr, ifaces []Iface) (netip.Addr, Kind, error) {
	switch {
	case a.IsLoopback():
		return a, Loopback, nil
	case a.IsUnspecified():
		return netip.Addr{}, "", errors.New("gatehouse never listens on all interfaces; name one address")
	}
	for _, f := range ifaces {
		for _, x := range f.Addrs {
			if x == a && isTailscaleIface(f) {
				return a, Tailscale, nil
			}
		}
	}
	if isPrivate(a) {
		return a, LAN, nil
	}
	return netip.Addr{}, "", fmt.Errorf("%s is not a Tailscale, private LAN or loopback address; gatehouse never listens on a public one", a)
}

func pickTailscale(ifaces []Iface) (netip.Addr, bool) {
	var v6 netip.Addr
	for _, f := range ifaces {
		if !f.Up || !isTailscaleIface(f) {
			continue
		}
		for _, a := range f.Addrs {
			if a.Is4() && cgnat.Contains(a) {
				return a, true
			}
			if tailnet6.Contains(a) && !v6.IsValid() {
				v6 = a
			}
		}
	}
	return v6, v6.IsValid()
}

func pickLAN(ifaces []Iface) (netip.Addr, bool) {
	var v6 netip.Addr
	for _, f := range ifaces {
		if !f.Up || isTailscaleIface(f) {
			continue
		}
		for _, a := range f.Addrs {
			if a.Is4() && isPrivate(a) {
				return a, true
			}
			if isPrivate(a) && !v6.IsValid() {
				v6 = a
			}
		}
	}
	return v6, v6.IsValid()
}
