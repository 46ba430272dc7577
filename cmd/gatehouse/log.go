package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse/rpc"
)

func init() {
	register(&command{
		name:    "log",
		summary: "show what each device asked for, and check the log's chain",
		usage:   "[--device ID] [--since TIME] [--format text|json]",
		help: `Prints the host's request log: one line per device request, with the time, the
device and its key fingerprint, the method, the target, the outcome and how long
it took (never parameters, file text or diff content). Each line carries the
hash of the one before, so a cut or an edit is found: when the chain is broken,
log says where and exits 1.

Requests refused before they reach a method (STALE: the device's clock is off
or the frame is old; REPLAY: a frame seen before; BUSY: too many at once) are
counted per device and minute: one line with the count, written when the
minute ends, so a flood shows as a number and never pushes the rest out.
Past 1,000 devices in a minute the rest are counted as "others".

--since takes a time (2026-11-30T12:00:00Z) or a duration back from now (2h).`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			device := fs.String("device", "", "only this device's requests")
			since := fs.String("since", "", "only requests since this time or duration ago")
			format := formatFlag(fs, "text", "json")
			return func(e *env, args []string) int {
				c := named("log")
				if len(args) > 0 {
					return usageError(e, c, "takes no arguments")
				}
				if !checkFormat(e, c, *format, "text", "json") {
					return exitUsage
				}
				from, err := parseSince(*since)
				if err != nil {
					return usageError(e, c, "%v", err)
				}
				store, code := openState(e)
				if store == nil {
					return code
				}
				entries, broken, err := rpc.ReadLog(store.Dir())
				if err != nil && !errors.Is(err, rpc.ErrChainBroken) {
					fmt.Fprintf(e.stderr, "gatehouse log: %v\n", err)
					return exitUsage
				}
				var shown []rpc.LogEntry
				for _, en := range entries {
					if (*device == "" || en.Device == *device) && !lastTime(en).Before(from) {
						shown = append(shown, en)
					}
				}
				if *format == "json" {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					_ = enc.Encode(map[string]any{"entries": shown, "chainIntact": broken < 0, "brokenAt": broken})
				} else {
					for _, en := range shown {
						printEntry(e, en)
					}
				}
				if broken >= 0 {
					fmt.Fprintf(e.stderr, "gatehouse log: the chain is broken at entry %d: the log was cut or edited there\n", broken+1)
					return exitFound
				}
				return exitOK
			}
		},
	})
}

// printEntry prints one line: a request, or a minute's count of requests
// refused before dispatch.
func printEntry(e *env, en rpc.LogEntry) {
	if en.Count > 0 {
		fmt.Fprintf(e.stdout, "%s  %-20s %-16s %-37s %-14s %d in this minute\n", en.Time.Format(time.RFC3339),
			en.Device, short(en.Fingerprint), "(refused before dispatch)", en.Code, en.Count)
		return
	}
	fmt.Fprintf(e.stdout, "%s  %-20s %-16s %-18s %-18s %-14s %dms\n", en.Time.Format(time.RFC3339),
		en.Device, short(en.Fingerprint), en.Method, en.Target, en.Code, en.MS)
}

// lastTime is when an entry's last request came: a count's minute may end
// after --since even if it began before.
func lastTime(en rpc.LogEntry) time.Time {
	if en.Count > 0 {
		return en.Time.Add(time.Minute - time.Nanosecond)
	}
	return en.Time
}

func short(fp string) string {
	if len(fp) > 16 {
		return fp[:16]
	}
	return fp
}

func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return time.Now().Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since takes a time like 2026-11-30T12:00:00Z or a duration like 2h")
	}
	return t, nil
}
