#!/usr/bin/env bash
# bench-cache.sh — what a scan leaves in the page cache, and how fast it reads
# cold, on the synthetic data set of package internal/benchdata (VM-like
# images, logs, binaries, small files).
#
# Usage: scripts/bench-cache.sh [SIZE [RUNS]]
#        SIZE: the data set, default 2G (K, M, G suffixes; the issue's case
#        is 10G); RUNS: cold runs of each reader, default 2.
#        DATA=DIR scans DIR instead (kept; its pages are evicted as below).
#        BIN=path/to/ddtsim measures another build (default: this tree's).
#
# 1. The page cache: Cached (/proc/meminfo) before and after a scan with the
#    default policy (--no-cache: what the scan brings in is dropped once
#    read) and with --cache, and what the cache holds of the scanned files
#    themselves after each (cachestat). When memory is full, Cached hardly
#    moves either way (the kernel evicts other pages for the scan's):
#    the files' own share says what the scan left.
# 2. Cold reads: wall seconds of ddtsim --zdb (default policy) and of
#    `find | xargs cat > /dev/null` over the same files, RUNS runs each,
#    interleaved, every run with the files' pages evicted first, and what
#    each read from the disks (/usr/bin/time's file system inputs).
#
# The host's page cache is never dropped as a whole (no drop_caches): only the
# data set's own pages, file by file, with posix_fadvise(POSIX_FADV_DONTNEED)
# after fsync (go run ./scripts/cmd/pagecache). The other processes'
# pages stay, so the figures hold on a shared host, but they also vary with
# what those processes do (and, in a VM, with the host's memory): compare
# the runs of one invocation, not across invocations. Needs GNU time
# (/usr/bin/time) for the input counts (skipped without), and SIZE plus
# 1 GiB free in $TMPDIR (else /tmp); the data set is removed at exit.
set -euo pipefail

size=${1:-2G}
runs=${2:-2}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# shellcheck source=lib/benchdata.sh
. scripts/lib/benchdata.sh
bench_setup bench-cache

bench_data bench-cache "$size" "$tmp"
bytes=$(find "$data" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }')
nfiles=$(find "$data" -type f | wc -l)
mib() { awk -v n="$1" 'BEGIN { printf "%.0f MiB", n / 1048576 }'; }
cached_kib() { awk '$1 == "Cached:" { print $2 }' /proc/meminfo; }
# resident: the bytes of the data set the page cache holds.
resident() { "$pc" resident "$data" | awk '{ print $1 }'; }

echo "data: $data, $(mib "$bytes") ($bytes bytes) in $nfiles files; $(nproc) CPUs; kernel $(uname -r)"
echo "memory: $(awk '$1 == "MemTotal:" || $1 == "MemFree:" || $1 == "Cached:" { printf "%s %.0f MiB  ", $1, $2 / 1024 }' /proc/meminfo)"
echo

# --- 1. the page cache --------------------------------------------------------

echo "page cache around one scan (the data set evicted before each):"
printf '  %-22s %14s %14s %12s %26s\n' "ddtsim" "Cached before" "Cached after" "growth" "the data set's pages after"
for policy in --no-cache --cache; do
	"$pc" evict "$data"
	before=$(cached_kib)
	"$bin" --zdb "$policy" "$data" >/dev/null
	after=$(cached_kib)
	res=$(resident)
	printf '  %-22s %10.0f MiB %10.0f MiB %+8.0f MiB %14s (%5.1f %%)\n' "$policy" \
		"$(echo "$before / 1024" | bc -l)" "$(echo "$after / 1024" | bc -l)" "$(echo "($after - $before) / 1024" | bc -l)" \
		"$(mib "$res")" "$(echo "100 * $res / $bytes" | bc -l)"
done
echo

# --- 2. cold reads -----------------------------------------------------------

have_time=0
[[ -x /usr/bin/time ]] && have_time=1
((have_time)) || echo "bench-cache: no /usr/bin/time (package time): the inputs are not counted" >&2

export D=$data B=$bin
# cold LABEL COMMAND: evict the data set, run COMMAND (bash -c) and print a row.
cold() {
	local label=$1 cmd=$2 t0 t1 in="-"
	"$pc" evict "$data"
	t0=$EPOCHREALTIME
	if ((have_time)); then
		/usr/bin/time -f '%I' -o "$tmp/time" bash -c "$cmd"
		in=$(awk -v n="$(tail -n 1 "$tmp/time")" 'BEGIN { printf "%.0f MiB", n * 512 / 1048576 }')
	else
		bash -c "$cmd"
	fi
	t1=$EPOCHREALTIME
	local s
	s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	printf '  %-34s %8s s %8.0f MB/s %12s\n' "$label" "$s" "$(echo "$bytes / 1000000 / $s" | bc -l)" "$in"
}
echo "cold reads (the data set evicted before each run):"
printf '  %-34s %10s %13s %12s\n' "reader" "wall" "rate" "read"
for ((i = 1; i <= runs; i++)); do
	cold "ddtsim --zdb, run $i" '"$B" --zdb "$D" >/dev/null'
	cold "find | xargs cat, run $i" 'find "$D" -type f -print0 | xargs -0 cat >/dev/null'
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
