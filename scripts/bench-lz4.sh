#!/usr/bin/env bash
# bench-lz4.sh — ddtsim's LZ4 sizing (compress/lz4: Compressor.Size, and
# Compress for reference) against C `lz4 -1`, per core, on the same bytes cut
# into the same independent 128 KiB blocks.
#
# Usage: scripts/bench-lz4.sh [SIZE [ROUNDS]]   SIZE of the data set (default
#                                              64M), ROUNDS (default 5, at least 3)
#
# Method. The synthetic data set of package internal/benchdata (what
# scripts/bench.sh uses) is generated into a temporary directory; the files of
# each of its parts are concatenated in name order into one input file:
# images.bin (VM-image-like: random, text and zero records), logs.bin
# (text-like) and bin.bin (binary-like). Each input is then measured, in
# memory and on one core, by both sides:
#
#   - C: `lz4 -q -b1 -B131072 -i1 FILE`, lz4's own benchmark mode at level 1:
#     it loads FILE, cuts it into independent 131072-byte blocks (the last one
#     shorter) and compresses each one on its own with LZ4_compress_fast
#     (acceleration 1, a full-size output buffer), repeating for about one
#     second; it is single-threaded, and reports compression MB/s (10^6 bytes
#     of input per second; of the fastest pass, lz4's own rule).
#   - Go: BenchmarkBlocks of compress/lz4 (a test binary built once, run with
#     GOMAXPROCS=1 and -test.benchtime 1s) on the same FILE
#     (DDTSIM_BENCH_FILES), cut into the same blocks, reporting MB/s of input
#     the same way (mean over the timed iterations): "Size" is the size-only
#     path with ZFS's capacity (131072 − 131072/8 bytes for a 128 KiB block,
#     as zio.Writer uses it: an incompressible block stops at 7/8 of its
#     input), "Size-nolimit" the same with a capacity that never fails (every
#     block compressed to its end, like C lz4), "Compress" the full output
#     with ZFS's capacity.
#
# The machine may be shared and noisy: each round measures every input with
# every tool back to back (interleaved), and the table gives the median of
# the rounds. ratio = Go Size MB/s ÷ lz4 -1 MB/s (both per core).
set -euo pipefail

size=${1:-64M}
rounds=${2:-5}
if ((rounds < 3)); then
	echo "bench-lz4: ROUNDS must be at least 3" >&2
	exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if ! command -v lz4 >/dev/null; then
	echo "bench-lz4: lz4 is not installed (Debian: apt-get install lz4)" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddtsim-bench-lz4.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

echo "bench-lz4: building the data generator and the compress/lz4 test binary" >&2
go build -o "$tmp/gen" ./internal/benchdata/gen
go test -c -o "$tmp/lz4.test" ./compress/lz4

echo "bench-lz4: generating $size of data" >&2
"$tmp/gen" -o "$tmp/data" -size "$size"
inputs=()
for part in images logs bin; do
	find "$tmp/data/$part" -type f -print0 | sort -z | xargs -0 cat >"$tmp/$part.bin"
	inputs+=("$part")
done

# median: the middle one of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# c_mbs FILE: lz4 -1's compression MB/s on FILE in 128 KiB blocks.
c_mbs() {
	lz4 -q -b1 -B131072 -i1 "$1" 2>&1 | tr '\r' '\n' |
		awk '$1 == "-1" { for (i = 1; i <= NF; i++) if ($(i + 1) == "MB/s") { print $i; exit } }'
}

# go_mbs FILE: prints "NAME MB/s" for each Go benchmark on FILE.
go_mbs() {
	local base
	base=$(basename "$1")
	DDTSIM_BENCH_FILES=$1 GOMAXPROCS=1 "$tmp/lz4.test" -test.run '^$' \
		-test.bench "^BenchmarkBlocks/${base//./\\.}/" -test.benchtime 1s |
		awk '/^BenchmarkBlocks\// { split($1, n, "/"); sub(/-[0-9]+$/, "", n[3]); for (i = 1; i <= NF; i++) if ($(i + 1) == "MB/s") print n[3], $i }'
}

declare -A res # "input tool" -> newline-separated MB/s of the rounds
for ((r = 1; r <= rounds; r++)); do
	echo "bench-lz4: round $r of $rounds" >&2
	for in in "${inputs[@]}"; do
		f="$tmp/$in.bin"
		v=$(c_mbs "$f")
		[[ -n $v ]] || { echo "bench-lz4: no figure from lz4 -b1 on $in" >&2; exit 1; }
		res["$in lz4"]+="$v"$'\n'
		while read -r name v; do
			res["$in $name"]+="$v"$'\n'
		done < <(go_mbs "$f")
	done
done

echo
echo "data: $size set of internal/benchdata, 128 KiB blocks; host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "MB/s per core (10^6 input bytes/s), median of $rounds interleaved rounds"
printf '%-8s %10s %10s %14s %10s %8s %14s\n' input "lz4 -1" "Go Size" "Go Size-nolim" "Go Compr" ratio "ratio-nolimit"
for in in "${inputs[@]}"; do
	c=$(printf '%s' "${res["$in lz4"]}" | median)
	s=$(printf '%s' "${res["$in Size"]}" | median)
	sn=$(printf '%s' "${res["$in Size-nolimit"]}" | median)
	g=$(printf '%s' "${res["$in Compress"]}" | median)
	printf '%-8s %10s %10s %14s %10s %8s %14s\n' "$in" "$c" "$s" "$sn" "$g" \
		"$(awk -v a="$s" -v b="$c" 'BEGIN { printf "%.2f", a / b }')" \
		"$(awk -v a="$sn" -v b="$c" 'BEGIN { printf "%.2f", a / b }')"
done
