package lan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
)

// Params nested 10,000 levels deep, sent over a real LAN connection, are
// answered as a parameter refusal. Before rpc's parseRequest set such params
// aside (rpc/envelope.go), the host could not decode the envelope
// (encoding/json stops at 10,000 levels), answered HTTP 400, and the device
// told its person "That computer is not connected."
func TestDeepParamsOverTheLAN(t *testing.T) {
	f := newFixture(t, nil)
	p, err := f.pair(t, trust.View)
	if err != nil {
		t.Fatal(err)
	}
	deep := json.RawMessage(strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000))
	_, err = f.call(t, p, "host.hello", deep)
	if codeOf(err) != rpc.CodeBadParams || !strings.Contains(err.Error(), "nest more than 64 levels") {
		t.Fatalf("got %v", err)
	}
}
