#!/usr/bin/env bash
# bench-files.sh — what a scan costs per file: FILES small files (1 to 512
# bytes, three quarters of them distinct; scripts/cmd/gentree) in 100
# top-level directories scanned by ddtsim without --save, and with --save
# DIR --by dir and checkpoints (--checkpoint CHECKPOINT), runs interleaved;
# prints wall seconds, files per second and peak RSS (MiB) of each run, the
# save/no-save ratio of the medians, and the checkpoints' pauses.
#
# Usage: scripts/bench-files.sh [FILES [RUNS [TREE [CHECKPOINT]]]]
#        defaults: 300000 files, 3 runs each, a temporary tree (removed at
#        exit; a TREE given is kept and reused if it holds files), 1m.
#        BIN=path/to/ddtsim compares another build (default: this tree's).
#
# Needs GNU time (/usr/bin/time). Disk: about 4 KiB per file (ext4's block),
# 40 GB for 10 million files; writing them takes about 7 minutes here.
set -euo pipefail

files=${1:-300000}
runs=${2:-3}
tree=${3:-}
every=${4:-1m}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

[[ -x /usr/bin/time ]] || { echo "bench-files: needs GNU time (/usr/bin/time)" >&2; exit 1; }
work=$(mktemp -d)
cleanup() { rm -rf "$work"; [[ -n ${tmptree:-} ]] && rm -rf "$tmptree"; return 0; }
trap cleanup EXIT
if [[ -z $tree ]]; then
	tmptree=$(mktemp -d)
	tree=$tmptree/tree
fi
bin=${BIN:-$work/ddtsim}
[[ -n ${BIN:-} ]] || go build -o "$bin" ./cmd/ddtsim
go build -o "$work/gentree" ./scripts/cmd/gentree
if [[ ! -d $tree/t000 ]]; then
	echo "bench-files: writing $files files into $tree" >&2
	start=$(date +%s.%N)
	"$work/gentree" -o "$tree" -files "$files"
	echo "bench-files: written in $(echo "$(date +%s.%N) - $start" | bc) s" >&2
fi
n=$(find "$tree" -type f | wc -l)
echo "tree: $tree, $n files; $(nproc) CPUs"

# run LABEL ARGS...: one scan, timed; prints a row, appends wall s to $work/LABEL
run() {
	local label=$1
	shift
	rm -rf "$work/save"
	DDTSIM_DEBUG_CHECKPOINTS=1 /usr/bin/time -f '%e %M' -o "$work/time" "$bin" "$@" "$tree" >/dev/null 2>"$work/err" || {
		cat "$work/err" >&2
		exit 1
	}
	read -r wall kb <"$work/time"
	grep '^ddtsim: checkpoint' "$work/err" >>"$work/checkpoints" || true
	echo "$wall" >>"$work/$label"
	printf '%-34s %8.1f %10.0f %8.0f\n' "$label" "$wall" "$(echo "$n / $wall" | bc -l)" "$(echo "$kb / 1024" | bc -l)"
}
printf '%-34s %8s %10s %8s\n' "ddtsim" "wall s" "files/s" "RSS MiB"
for ((i = 0; i < runs; i++)); do
	run plain
	run "save+by-dir" --save "$work/save" --by dir --checkpoint "$every"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
a=$(median "$work/plain")
b=$(median "$work/save+by-dir")
echo "medians: plain $a s, --save --by dir $b s: files/s with --save = $(echo "$a / $b" | bc -l | cut -c1-5) x without"
if [[ -s $work/checkpoints ]]; then
	echo "checkpoints (workers paused; written while the scan goes on):"
	sed 's/^/  /' "$work/checkpoints"
fi
