#!/usr/bin/env bash
# bench-read.sh — a full scan against --read P% on the same data, cold,
# side by side in one run: wall time, bytes the scan counted as read, and
# what the disks delivered.
#
# Usage: scripts/bench-read.sh [SIZE [RUNS [FRACTIONS]]]
#        SIZE: the data set of package internal/testutil/benchdata (VM-like images
#        and clones, logs, binaries, small files), default 20G (K, M, G
#        suffixes); RUNS: cold runs of each command, default 2;
#        FRACTIONS: the --read fractions, default "1% 5%".
#        DATA=DIR scans DIR instead (kept; its pages are evicted as below).
#        BIN=path/to/ddtsim measures another build (default: this tree's).
#
# Issue 31 asks --read P% to take at most 2x P of a full scan's wall time
# on a >= 20 GB estate. The rows are interleaved (full, then each fraction,
# RUNS times), each with the data set's pages evicted first
# (posix_fadvise DONTNEED, file by file: go run ./scripts/cmd/pagecache;
# the host's cache is never dropped as a whole). The table gives the
# median of the runs and each fraction's time as a share of the full
# scan's, against the 2x P budget. "counted" is what ddtsim read
# (ReadBytes in --json); "disk" is /usr/bin/time's file system inputs,
# which include the kernel's read-ahead and the metadata. The row "stat"
# is find lstat-ing every file, the floor of a run that walks all the
# metadata. The machine is shared: compare the rows of one invocation, not
# across invocations.
# Needs SIZE plus 1 GiB free in $TMPDIR (else /tmp); the generated data
# set is removed at exit.
set -euo pipefail

size=${1:-20G}
runs=${2:-2}
fracs=${3:-1% 5%}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# shellcheck source=lib/benchdata.sh
. scripts/lib/benchdata.sh
bench_setup bench-read
[[ -x /usr/bin/time ]] || { echo "bench-read: needs GNU time (/usr/bin/time, package time)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench-read: needs jq" >&2; exit 1; }

bench_data bench-read "$size" "$tmp"
bytes=$(find "$data" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }')
nfiles=$(find "$data" -type f | wc -l)
echo "data: $data, $(awk -v n="$bytes" 'BEGIN { printf "%.1f GiB", n / 2^30 }') ($bytes bytes) in $nfiles files; $(nproc) CPUs; kernel $(uname -r)"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

# run LABEL ARGS...: evict the data set, run ddtsim --json ARGS DATA, and
# append "LABEL wall counted disk" to $tmp/rows.
run() {
	local label=$1 t0 t1
	shift
	"$pc" evict "$data"
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%I' -o "$tmp/time" "$bin" --json "$@" "$data" >"$tmp/out.json"
	t1=$EPOCHREALTIME
	local counted disk
	counted=$(jq '.counters.read_bytes // .counters.ReadBytes // 0' "$tmp/out.json")
	disk=$(awk -v n="$(tail -n 1 "$tmp/time")" 'BEGIN { printf "%.0f", n * 512 }')
	echo "$label $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') $counted $disk" >>"$tmp/rows"
	echo "  $label: $(tail -n 1 "$tmp/rows" | cut -d' ' -f2) s" >&2
}
# stat: the floor of any --read run, which walks all the metadata: find
# lstat-ing every file (one thread, the data's pages evicted as above).
stat_floor() {
	local t0 t1
	"$pc" evict "$data"
	t0=$EPOCHREALTIME
	find "$data" -type f -printf '%s\n' >/dev/null
	t1=$EPOCHREALTIME
	echo "stat $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') 0 0" >>"$tmp/rows"
	echo "  stat (find -printf %s): $(tail -n 1 "$tmp/rows" | cut -d' ' -f2) s" >&2
}
for ((i = 1; i <= runs; i++)); do
	run full
	for f in $fracs; do
		run "$f" --read "$f" --read-seed "$i"
	done
	stat_floor
done

echo
printf '%-8s %10s %10s %12s %12s %14s %10s\n' "scan" "wall (med)" "of full" "budget 2xP" "counted" "counted/asked" "disk"
awk -v bytes="$bytes" '
	{ n[$1]++; w[$1, n[$1]] = $2; c[$1] += $3; d[$1] += $4; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
	function med(l,   i, j, t, m, a) {
		m = n[l]; for (i = 1; i <= m; i++) a[i] = w[l, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		full = med("full")
		for (i = 1; i <= k; i++) {
			l = order[i]; m = med(l); p = (l == "full") ? 1 : (l + 0) / 100
			plain = (l == "full" || l == "stat")
			printf "%-8s %8.2f s %9.1f%% %11s %9.2f GiB %14s %7.2f GiB\n", l, m, 100 * m / full,
				plain ? "-" : sprintf("%.0f%%", 200 * p), c[l] / n[l] / 2^30,
				plain ? "-" : sprintf("%.2f", c[l] / n[l] / (p * bytes)), d[l] / n[l] / 2^30
		}
	}' "$tmp/rows"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
