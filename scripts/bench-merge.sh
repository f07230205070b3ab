#!/usr/bin/env bash
# bench-merge.sh — how ddtsim merge scales: SCANS saved scans holding
# ENTRIES DDT entries in all (synthetic, scripts/cmd/genscans) merged
# with --mem 256M on one core (-j 1) and on all cores, twice each; prints
# wall seconds, entries per second and peak RSS (MiB) of each run.
#
# Usage: scripts/bench-merge.sh [SCANS [ENTRIES [DIR]]]
#        defaults: 64 scans, 100000000 entries, a temporary directory
#        (removed at exit; a DIR given is kept and reused if it holds them).
#
# Needs GNU time (/usr/bin/time; apt-get install time). About 2 GB of disk
# per 100 million entries.
set -euo pipefail

scans=${1:-64}
entries=${2:-100000000}
dir=${3:-}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

[[ -x /usr/bin/time ]] || { echo "bench-merge: needs GNU time (/usr/bin/time)" >&2; exit 1; }
bin=$(mktemp -d)
cleanup() { rm -rf "$bin"; [[ -z ${3:-} && -n ${tmpdata:-} ]] && rm -rf "$tmpdata"; return 0; }
trap cleanup EXIT
if [[ -z $dir ]]; then
	tmpdata=$(mktemp -d)
	dir=$tmpdata/scans
fi
go build -o "$bin/ddtsim" ./cmd/ddtsim
go build -o "$bin/genscans" ./scripts/cmd/genscans
if [[ ! -d $dir/scan-00 ]]; then
	echo "bench-merge: writing $scans scans, $entries entries, into $dir" >&2
	start=$(date +%s.%N)
	"$bin/genscans" -o "$dir" -scans "$scans" -entries "$entries" 2>/dev/null
	echo "bench-merge: written in $(echo "$(date +%s.%N) - $start" | bc) s, $(du -sh "$dir" | cut -f1)" >&2
fi
cat "$dir"/scan-*/part-*.parquet >/dev/null # warm the page cache

printf '%-28s %8s %14s %10s\n' "merge --mem 256M" "wall s" "entries/s" "RSS MiB"
for jobs in 1 0; do
	for run in 1 2; do
		/usr/bin/time -o "$bin/time" -f '%e %M' "$bin/ddtsim" merge --mem 256M -j "$jobs" --zdb "$dir"/scan-* >/dev/null 2>"$bin/err" || { cat "$bin/err" >&2; exit 1; }
		read -r wall rss <"$bin/time"
		label="-j $jobs"; [[ $jobs == 0 ]] && label="-j 0 ($(nproc) cores)"
		printf '%-28s %8.1f %14.0f %10.0f\n' "$label, run $run" "$wall" "$(echo "$entries / $wall" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
	done
done
