#!/usr/bin/env bash
# grep-whole-process.sh: files.grep following .gitignore, asked from outside a
# warm `gatehouse serve` by a paired client process, against ripgrep on the
# same checkout, interleaved in one run.
#
#   bench/grep-whole-process.sh CHECKOUT RUNS BINARY [unwatched]
#
# CHECKOUT is a committed git checkout in which the needle "zebraquokka" is
# searched: the rpc benchmark's tree (`go test ./rpc/ -run '^$' -bench
# 'GrepFollowingGitignore/57k/ripgrep' -benchtime 1x` builds grepgit-57000-2000
# and grepgit-200000-2000 in the benchmark folder, ~/.cache/gatehouse-bench).
#
# The script starts `BINARY serve --listen loopback` on CHECKOUT with a fresh
# state folder, pairs a second fresh state folder as a device with view access
# the way a person would (`call` asks, `devices allow CODE` answers), subscribes
# it to the checkout (so the serve's watcher runs, as while a page is open;
# with "unwatched" it does not, and each search asks git for the ignored
# files), warms both sides, then runs each round, in this order:
#   rg      `rg -F --no-messages zebraquokka CHECKOUT` in CHECKOUT (ignore
#           files followed, as files.grep follows .gitignore)
#   grep    `BINARY call files.grep {target, query, matchCase}`: a whole client
#           process, its own session and key exchange, the serve's search
#   hello   `BINARY call host.hello`: the same client process and session with
#           no work: what a call costs before the search
# Prints each variant's wall time (median, min, max in ms) and the medians'
# ratio grep / rg. Nothing is left running: the serve this script started is
# stopped by its process id, and the state folders are removed.
set -euo pipefail
repo=$(realpath "$1"); runs=$2; bin=$(realpath "$3"); watched=${4:-watched}
needle=zebraquokka
tmp=$(mktemp -d /tmp/gatehouse-grep-bench.XXXXXX)
serve_pid=
cleanup() {
	if [[ -n $serve_pid ]]; then
		kill "$serve_pid" 2>/dev/null || true
		wait "$serve_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/state" "$tmp/phone"

GATEHOUSE_HOME=$tmp/state "$bin" serve --listen loopback --no-tui "$repo" >"$tmp/serve.log" 2>&1 &
serve_pid=$!
for ((i = 0; i < 300; i++)); do [[ -S $tmp/state/control.sock ]] && break; sleep 0.1; done
[[ -S $tmp/state/control.sock ]] || { cat "$tmp/serve.log" >&2; echo "serve did not start" >&2; exit 1; }
link=$(GATEHOUSE_HOME=$tmp/state "$bin" devices link)
export GATEHOUSE_LAN_LINK=$link
call() { GATEHOUSE_HOME=$tmp/phone "$bin" call "$@"; }

# Pair as a person would: the device asks, the computer allows its code.
call host.hello >"$tmp/pair.out" 2>"$tmp/pair.err" &
pair_pid=$!
code=
for ((i = 0; i < 300; i++)); do
	code=$(GATEHOUSE_HOME=$tmp/state "$bin" devices | sed -n 's/.*with code \([0-9]\{3\}\) \([0-9]\{3\}\).*/\1\2/p' | head -1)
	[[ -n $code ]] && break
	sleep 0.1
done
[[ -n $code ]] || { echo "no device asked to pair" >&2; exit 1; }
GATEHOUSE_HOME=$tmp/state "$bin" devices allow "$code" --grant view >/dev/null
wait "$pair_pid"

target=$(call projects.list | sed -n 's/.*"id": "\([^"]*\)".*/\1/p' | head -1)
[[ -n $target ]] || { echo "no project served" >&2; exit 1; }
if [[ $watched != unwatched ]]; then
	call subscribe '{"targets":["'"$target"'"]}' >/dev/null
fi
params='{"target":"'"$target"'","query":"'"$needle"'","matchCase":true}'

# Warm, and check both tools find the same lines (a search that did not
# follow .gitignore would find the ignored build/ too).
want=$(cd "$repo" && rg -F --no-messages -c "$needle" "$repo" | awk -F: '{n += $NF} END {print n}')
call files.grep "$params" >"$tmp/grep.json"
call files.grep "$params" >"$tmp/grep.json"
got=$(grep -c '"path"' "$tmp/grep.json" || true)
if [[ $got != "$want" ]] || grep -q '"next"\|"truncated": true' "$tmp/grep.json"; then
	echo "files.grep found $got lines in one page, ripgrep $want" >&2
	exit 1
fi

ms() { # run the command, its output discarded; print its wall time in ms
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	echo "scale=2; ($t1 - $t0) / 1000000" | bc
}
declare -A times
ratios=
for ((i = 0; i < runs; i++)); do
	r=$(cd "$repo" && ms rg -F --no-messages "$needle" "$repo")
	g=$(ms call files.grep "$params")
	times[rg]+="$r "
	times[grep]+="$g "
	times[hello]+="$(ms call host.hello) "
	ratios+="$(echo "scale=3; $g / $r" | bc) "
done
stats() { # median, min, max
	tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {printf "%.1f %.1f %.1f", a[int((NR+1)/2)], a[1], a[NR]}'
}
echo "$runs rounds, $watched, in $repo ($(git -C "$repo" ls-files | wc -l) tracked files, $want matching lines), $(date -u +%FT%TZ)"
printf '%-8s %9s %9s %9s\n' variant median min max
for v in rg grep hello; do
	read -r med lo hi <<<"$(echo "${times[$v]}" | stats)"
	printf '%-8s %9s %9s %9s\n' "$v" "$med" "$lo" "$hi"
	declare "med_$v=$med"
done
echo "grep / rg: medians $(echo "scale=3; $med_grep / $med_rg" | bc)×, per round median $(echo "$ratios" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')× (min $(echo "$ratios" | tr ' ' '\n' | grep . | sort -g | head -1)×); (grep - hello) / rg: $(echo "scale=3; ($med_grep - $med_hello) / $med_rg" | bc)×"
