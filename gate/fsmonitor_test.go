package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestMonitorHookAnswer: the hook prints the serve's paths only for the
// token the serve issued last; any other token, including the one git
// makes up for an index without one, gets "/" (look at everything); a
// version it does not speak, or an answer it cannot read, fails, which git
// also takes as "look at everything".
func TestMonitorHookAnswer(t *testing.T) {
	answer := filepath.Join(t.TempDir(), "answer")
	if err := os.WriteFile(answer, []byte("gatehouse:e:7\x00gatehouse:e:9\x00a/b.txt\x00c\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == monitorAnswerEnv {
			return answer
		}
		return ""
	}
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"2", "gatehouse:e:7"}, 0, "gatehouse:e:9\x00a/b.txt\x00c\x00"},
		{[]string{"2", "gatehouse:e:6"}, 0, "gatehouse:e:9\x00/\x00"},
		{[]string{"2", "1796215279012591578"}, 0, "gatehouse:e:9\x00/\x00"},
		{[]string{"1", "gatehouse:e:7"}, 1, ""},
	} {
		var out bytes.Buffer
		if code := MonitorHook(c.args, env, &out); code != c.code || out.String() != c.out {
			t.Errorf("%q: exit %d, printed %q; want %d, %q", c.args, code, out.String(), c.code, c.out)
		}
	}
	if err := os.WriteFile(answer, bytes.Repeat([]byte("x"), maxMonitorAnswer+1), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := MonitorHook([]string{"2", "x"}, env, &out); code != 1 || out.Len() != 0 {
		t.Errorf("an oversized answer: exit %d, printed %d bytes", code, out.Len())
	}
	if IsMonitorHook([]string{"2", "x"}, func(string) string { return "" }) {
		t.Error("a process without the answer's variable took itself for the hook")
	}
}

// TestMonitorNeedsAPlainPath: git runs a hook whose path holds a shell
// character through /bin/sh, which the kernel wall does not allow and which
// would read the path as shell: such a program is not used.
func TestMonitorNeedsAPlainPath(t *testing.T) {
	for _, p := range []string{"relative/gatehouse", "/opt/my tools/gatehouse", "/opt/$HOME/gatehouse", "/opt/a;b/gatehouse", ""} {
		if m := newMonitor(p); m != nil {
			m.close()
			t.Errorf("%q was taken as the hook", p)
		}
	}
	m := newMonitor("/usr/local/bin/gatehouse")
	if m == nil {
		t.Fatal("a plain path was not taken")
	}
	m.close()
	if _, err := os.Stat(m.dir); !os.IsNotExist(err) {
		t.Errorf("the private folder stayed: %v", err)
	}
}
