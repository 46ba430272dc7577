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
it took (never parameters, file text or diff content). Each call inside a batch
is a line of its own ("batch call N"), before the batch's line. Each line
carries the hash of the one before, across the rotated files, so a cut or an
edit is found: when the chain is broken, log says where and exits 1.

Requests refused before they reach a method (STALE: the device's clock is off
or the frame is old; REPLAY: a frame seen before; BUSY: too many at once) are
counted per device and minute: one line with the count, written when the
minute ends, so a flood shows as a number and never pushes the rest out.
Likewise a device's requests past 600 lines at once, then 20 a minute, are
counted per device, outcome and minute ("over its log budget"). Past 1,000
devices in a minute the rest are counted as "others".

The log is rotated at 32 MiB and 8 rotated files are kept (about a week of one
device at its budget). When older files were rotated out, log says so first:
how many lines in how many files, from when to when. The chain is checked from
the first line kept against what rotation recorded, so lines rotated out read
as dropped, and a rotated file deleted, or the first lines of one cut, read as
a broken chain. The newest lines can be cut from the end without a trace.

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
				r, err := rpc.OpenLog(store.Dir())
				if err != nil {
					fmt.Fprintf(e.stderr, "gatehouse log: %v\n", err)
					return exitUsage
				}
				defer r.Close()
				show := func(en rpc.LogEntry) bool {
					return (*device == "" || en.Device == *device) && !lastTime(en).Before(from)
				}
				if *format == "json" {
					writeLogJSON(e, r, show)
				} else {
					writeLogText(e, r, show)
				}
				if err := r.Err(); err != nil && !errors.Is(err, rpc.ErrChainBroken) {
					fmt.Fprintf(e.stderr, "gatehouse log: %v\n", err)
					return exitUsage
				}
				if broken := r.Broken(); broken >= 0 {
					fmt.Fprintf(e.stderr, "gatehouse log: the chain is broken at entry %d: the log was cut or edited there\n", broken+1)
					return exitFound
				}
				return exitOK
			}
		},
	})
}

// writeLogText prints what rotation dropped, then the entries shown, one a
// line, as they are read.
func writeLogText(e *env, r *rpc.LogReader, show func(rpc.LogEntry) bool) {
	if d := r.Dropped(); d != nil {
		fmt.Fprintf(e.stdout, "Older lines were rotated out: %s in %s, from %s to %s. The chain is checked from the first line kept.\n",
			count(int(d.Lines), "line"), count(int(d.Files), "file"), d.From.Format(time.RFC3339), d.To.Format(time.RFC3339))
	}
	for en, ok := r.Next(); ok; en, ok = r.Next() {
		if show(en) {
			printEntry(e, en)
		}
	}
}

// writeLogJSON writes {"entries": [...], "dropped", "chainIntact",
// "brokenAt"}, the entries as they are read: the log is never held whole.
func writeLogJSON(e *env, r *rpc.LogReader, show func(rpc.LogEntry) bool) {
	fmt.Fprint(e.stdout, "{\n  \"entries\": [")
	sep := "\n    "
	for en, ok := r.Next(); ok; en, ok = r.Next() {
		if !show(en) {
			continue
		}
		b, _ := json.MarshalIndent(en, "    ", "  ")
		fmt.Fprintf(e.stdout, "%s%s", sep, b)
		sep = ",\n    "
	}
	if sep != "\n    " {
		fmt.Fprint(e.stdout, "\n  ")
	}
	dropped, _ := json.MarshalIndent(r.Dropped(), "  ", "  ")
	fmt.Fprintf(e.stdout, "],\n  \"dropped\": %s,\n  \"chainIntact\": %t,\n  \"brokenAt\": %d\n}\n",
		dropped, r.Broken() < 0, r.Broken())
}

// printEntry prints one line: a request, a call inside a batch, or a
// minute's count of requests refused before dispatch or past the device's
// budget.
func printEntry(e *env, en rpc.LogEntry) {
	switch {
	case en.Kind == rpc.KindExcess:
		fmt.Fprintf(e.stdout, "%s  %-20s %-16s %-37s %-14s %d more in this minute\n", en.Time.Format(time.RFC3339),
			en.Device, short(en.Fingerprint), "(over its log budget)", en.Code, en.Count)
	case en.Count > 0:
		fmt.Fprintf(e.stdout, "%s  %-20s %-16s %-37s %-14s %d in this minute\n", en.Time.Format(time.RFC3339),
			en.Device, short(en.Fingerprint), "(refused before dispatch)", en.Code, en.Count)
	default:
		fmt.Fprintf(e.stdout, "%s  %-20s %-16s %-18s %-18s %-14s %dms%s\n", en.Time.Format(time.RFC3339),
			en.Device, short(en.Fingerprint), en.Method, en.Target, en.Code, en.MS, batchNote(en))
	}
}

// batchNote marks a call inside a batch; the batch's own line follows.
func batchNote(en rpc.LogEntry) string {
	if en.Batch == 0 {
		return ""
	}
	return fmt.Sprintf("  (batch call %d)", en.Batch)
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
