package lan

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/trust"
)

// The control socket lets the person at the computer run serve without a
// terminal: `gatehouse devices` shows the link and the devices, allows or
// denies a pair request, and unpairs a device, through control.sock in the
// state folder. It is owner-only twice over: the socket file is 0600 in a
// 0700 folder, and each connection's peer must be this user (SO_PEERCRED,
// LOCAL_PEERCRED).

// ControlSocket is the socket's name in the state folder.
const ControlSocket = "control.sock"

// ControlRequest is one command.
type ControlRequest struct {
	Op      string `json:"op"`                // status, allow, deny, revoke, rotate, rename, grant
	Request string `json:"request,omitempty"` // allow, deny: the request's pair code or id
	Grant   string `json:"grant,omitempty"`   // allow, grant
	Device  string `json:"device,omitempty"`
	Name    string `json:"name,omitempty"` // rename: the new name
}

// ControlAnswer is the answer: the status after the command, or an error.
type ControlAnswer struct {
	Status *Status `json:"status,omitempty"`
	Error  string  `json:"error,omitempty"`
	Denied int     `json:"denied,omitempty"` // deny with no request named: how many were denied
}

const maxControl = 4 << 10

// ServeControl listens on dir/control.sock until the returned stop is
// called.
func (s *Server) ServeControl(dir string) (stop func(), err error) {
	path := filepath.Join(dir, ControlSocket)
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, errors.New("another gatehouse serve is running (its control socket answers)")
		}
		_ = os.Remove(path) // a stale socket of a serve that died
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.control(c.(*net.UnixConn))
		}
	}()
	return func() { l.Close(); _ = os.Remove(path) }, nil
}

func (s *Server) control(c *net.UnixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
		_ = json.NewEncoder(c).Encode(ControlAnswer{Error: "not the owner of this gatehouse"})
		return
	}
	var req ControlRequest
	if err := json.NewDecoder(&limitReader{c, maxControl}).Decode(&req); err != nil {
		_ = json.NewEncoder(c).Encode(ControlAnswer{Error: "not a control request"})
		return
	}
	ans := ControlAnswer{}
	p := s.pairing
	switch req.Op {
	case "status":
	case "allow":
		// The request is named (its code or id): an allow reaches exactly
		// the request whose code the person compared, never whichever
		// waits at that moment.
		g := trust.None
		if req.Grant != "" {
			var err error
			if g, err = trust.ParseGrant(req.Grant); err != nil || g == trust.None {
				ans.Error = "the grant is view, control or full"
				break
			}
		}
		if err := p.Decide(req.Request, true, g); err != nil {
			ans.Error = err.Error()
		}
	case "deny":
		if req.Request == "" {
			ans.Denied = p.DenyAll()
		} else if err := p.Decide(req.Request, false, trust.None); err != nil {
			ans.Error = err.Error()
		}
	case "revoke":
		if !p.Revoke(req.Device) {
			ans.Error = fmt.Sprintf("%s %q", notPaired, req.Device)
		}
	case "rotate":
		p.Rotate()
	case "grant":
		g, err := trust.ParseGrant(req.Grant)
		if err != nil || g == trust.None {
			ans.Error = "the grant is view, control or full"
		} else if !p.SetGrant(req.Device, g) {
			ans.Error = fmt.Sprintf("%s %q", notPaired, req.Device)
		}
	case "rename":
		if st, _ := p.Status(); !slices.ContainsFunc(st.Devices, func(d Device) bool { return d.ID == req.Device }) {
			ans.Error = fmt.Sprintf("%s %q", notPaired, req.Device)
		} else if !p.Rename(req.Device, cleanName(req.Name)) {
			ans.Error = "another paired device has that name"
		}
	default:
		ans.Error = fmt.Sprintf("unknown op %q", req.Op)
	}
	st, _ := p.Status()
	st.URL = s.URL()
	for _, t := range s.host.Targets().All() {
		st.Served = append(st.Served, ServedFolder{ID: t.ID, Name: t.Name, Path: t.Root.Path(), Kind: string(t.Kind)})
	}
	st.Online = s.online()
	slices.Sort(st.Online)
	ans.Status = &st
	_ = json.NewEncoder(c).Encode(ans)
}

type limitReader struct {
	c net.Conn
	n int
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("too long")
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	k, err := l.c.Read(p)
	l.n -= k
	return k, err
}

// CleanName is a device name as a pairing keeps it: control characters
// dropped, at most 64 characters ('gatehouse devices name' on a kept pairing
// or a relay grant keeps names as the serve would).
func CleanName(n string) string { return cleanName(n) }

// notPaired begins the answer to a command naming a device that is not
// paired with this serve (IsNotPaired).
const notPaired = "no paired device"

// IsNotPaired reports whether err, from Control, says the device named is
// not paired with the running serve (it may be a relay device).
func IsNotPaired(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), notPaired+" ")
}

// ErrNoServe: no serve is running in this state folder.
var ErrNoServe = errors.New("no gatehouse serve is running here")

// ErrServeSilent: a serve holds the socket but did not answer in 10 s
// (stopped, or wedged): what it would say is unknown, so nothing may be
// taken as done or as absent.
var ErrServeSilent = errors.New("the running 'gatehouse serve' does not answer on its control socket; nothing was changed (try again, or stop it and start it again)")

// Control sends one command to the serve running in state folder dir.
func Control(dir string, req ControlRequest) (ControlAnswer, error) {
	var ans ControlAnswer
	c, err := net.DialTimeout("unix", filepath.Join(dir, ControlSocket), 2*time.Second)
	if err != nil {
		return ans, ErrNoServe
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return ans, fmt.Errorf("%w: %v", ErrServeSilent, err)
	}
	if err := json.NewDecoder(c).Decode(&ans); err != nil {
		return ans, fmt.Errorf("%w: %v", ErrServeSilent, err)
	}
	if ans.Error != "" {
		return ans, errors.New(ans.Error)
	}
	return ans, nil
}
