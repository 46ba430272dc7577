#!/usr/bin/env bash
# do-overhead.sh: the whole-process cost of `gatehouse do git.status '{}'`
# against raw `git status` on the same checkout, interleaved in one run.
#
#   bench/do-overhead.sh CHECKOUT RUNS BINARY...
#
# Each round runs every variant once, so drift on a shared machine hits all:
#   git          raw `git status` in CHECKOUT
#   version      `gatehouse version` (the last BINARY): the process start alone
#   do:NAME      `NAME do git.status '{}'` for each BINARY, each with a state
#                folder of its own (GATEHOUSE_HOME), where a binary that keeps
#                the kernel wall's self-test answer finds it kept
#   test:NAME    the last BINARY with its kept answer removed before each run:
#                every run proves the kernel again
# Prints each variant's wall time (median, min, max in ms, and the median's
# overhead over git's median) and its CPU time (perf stat's task-clock of the
# process and every child: what the run cost, which other work on a shared
# machine does not stretch). The state folders are fresh ones, not the user's.
set -euo pipefail
repo=$1; runs=$2; shift 2
bins=(); for b in "$@"; do bins+=("$(realpath "$b")"); done
last=${bins[-1]}
tmp=$(mktemp -d /tmp/gatehouse-do-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
ms() { # run the command; print its wall time in ms, a comma, its CPU time in ms
	local t0 t1
	t0=$(date +%s%N)
	perf stat -x, -e task-clock -o "$tmp/cpu" -- "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
	t1=$(date +%s%N)
	echo "$(echo "scale=2; ($t1 - $t0) / 1000000" | bc),$(grep task-clock "$tmp/cpu" | cut -d, -f1)"
}
declare -A times
order=(git version)
for b in "${bins[@]}"; do
	mkdir -p "$tmp/$(basename "$b")"
	GATEHOUSE_HOME="$tmp/$(basename "$b")" "$b" do git.status '{}' >/dev/null # warm; keep the proof
	order+=("do:$(basename "$b")")
done
mkdir -p "$tmp/test"
order+=("test:$(basename "$last")")
for ((i = 0; i < runs; i++)); do
	times[git]+="$(ms git status) "
	times[version]+="$(ms "$last" version) "
	for b in "${bins[@]}"; do
		times[do:$(basename "$b")]+="$(GATEHOUSE_HOME="$tmp/$(basename "$b")" ms "$b" do git.status '{}') "
	done
	rm -f "$tmp/test/wallproof.json"
	times[test:$(basename "$last")]+="$(GATEHOUSE_HOME="$tmp/test" ms "$last" do git.status '{}') "
done
stats() { # field $1 of each "wall,cpu" pair: median, min, max
	tr ' ' '\n' | grep . | cut -d, -f"$1" | sort -g | awk '{a[NR]=$1} END {printf "%.1f %.1f %.1f", a[int((NR+1)/2)], a[1], a[NR]}'
}
read -r gwall _ _ <<<"$(echo "${times[git]}" | stats 1)"
read -r gcpu _ _ <<<"$(echo "${times[git]}" | stats 2)"
echo "$runs rounds in $repo ($(git ls-files | wc -l) files), $(date -u +%FT%TZ)"
printf '%-26s %8s %8s %8s %9s   %8s %8s %8s %9s\n' variant wall min max "over git" cpu min max "over git"
for v in "${order[@]}"; do
	read -r wmed wlo whi <<<"$(echo "${times[$v]}" | stats 1)"
	read -r cmed clo chi <<<"$(echo "${times[$v]}" | stats 2)"
	printf '%-26s %8s %8s %8s %9s   %8s %8s %8s %9s\n' "$v" "$wmed" "$wlo" "$whi" "$(echo "$wmed - $gwall" | bc)" \
		"$cmed" "$clo" "$chi" "$(echo "$cmed - $gcpu" | bc)"
done
