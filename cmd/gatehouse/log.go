package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/display"
	"github.com/gatehouse/gatehouse/rpc"
	"github.com/gatehouse/gatehouse/trust"
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

--device names a device by its id (as the log, 'gatehouse devices' and the
request log show it) or by the name of a device paired or granted here. A
device that is in none of them, nor in the log, is refused with the list of
the known ones (exit 1): a typo must not read as "no requests".

--since takes a time (2026-11-30T12:00:00Z) or a duration back from now (2h).`,
		setup: func(fs *flag.FlagSet) func(*env, []string) int {
			device := fs.String("device", "", "only this device's requests: its id, or the name of a paired or granted device")
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
				if *device != "" {
					id, code := logDevice(e, store, *device)
					if code != exitOK {
						return code
					}
					*device = id
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

// maxKnownDevices bounds the devices a refusal lists.
const maxKnownDevices = 20

// logDevice resolves --device to the id the log names: an id or name of a
// device paired (kept, or with the running serve) or granted here, else an
// id found in the log itself (a device revoked since). Naming none of them,
// it says so with the known ones and returns exitFound.
func logDevice(e *env, store *trust.Store, want string) (string, int) {
	names := knownDeviceNames(store)
	if _, ok := names[want]; ok {
		return want, exitOK
	}
	var byName []string
	for id, name := range names {
		if name != "" && strings.EqualFold(strings.TrimSpace(name), strings.TrimSpace(want)) {
			byName = append(byName, id)
		}
	}
	if len(byName) == 1 {
		return byName[0], exitOK
	}
	inLog := loggedDevices(store)
	if inLog[want] {
		return want, exitOK
	}
	for id := range inLog {
		if _, ok := names[id]; !ok {
			names[id] = ""
		}
	}
	if len(byName) > 1 {
		sort.Strings(byName)
		fmt.Fprintf(e.stderr, "gatehouse log: %d devices are called %q; name one by its id: %s\n", len(byName), display.Text(want), strings.Join(byName, ", "))
		return "", exitFound
	}
	fmt.Fprintf(e.stderr, "gatehouse log: no device %q is paired or granted here or in the log; %s\n", display.Text(want), knownDeviceList(names))
	return "", exitFound
}

// knownDeviceNames maps the ids of the devices paired or granted here to
// their names: LAN pairings (the running serve's, else the kept ones) and
// relay grants.
func knownDeviceNames(store *trust.Store) map[string]string {
	names := map[string]string{}
	for _, d := range store.LAN().Devices {
		names[d.ID] = d.Name
	}
	if st, err := serveStatus(store); err == nil {
		for _, d := range st.Devices {
			names[d.ID] = d.Name
		}
	}
	for id, g := range store.Grants() {
		names[id] = g.Name
	}
	return names
}

// loggedDevices is the set of device ids in the request log.
func loggedDevices(store *trust.Store) map[string]bool {
	seen := map[string]bool{}
	r, err := rpc.OpenLog(store.Dir())
	if err != nil {
		return seen
	}
	defer r.Close()
	for en, ok := r.Next(); ok; en, ok = r.Next() {
		seen[en.Device] = true
	}
	return seen
}

// knownDeviceList says which devices there are, as "id (name)", sorted, at
// most maxKnownDevices.
func knownDeviceList(names map[string]string) string {
	if len(names) == 0 {
		return "no device is paired or granted here, and the log names none"
	}
	ids := make([]string, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for i, id := range ids {
		if i == maxKnownDevices {
			parts = append(parts, fmt.Sprintf("and %d more", len(ids)-i))
			break
		}
		if names[id] != "" {
			parts = append(parts, fmt.Sprintf("%s (%s)", display.Text(id), display.Text(names[id])))
		} else {
			parts = append(parts, display.Text(id))
		}
	}
	return "known devices: " + strings.Join(parts, ", ")
}
