#!/usr/bin/env bash
# bench-gzip-zstd.sh — ddtsim's gzip and zstd compression step (zio.Writer,
# as a scan runs it: the compressed length, ZFS's capacity, zstd's early
# abort) against the C tools gzip -N and zstd -N, one core, on the same bytes.
#
# Usage: scripts/bench-gzip-zstd.sh [SIZE [ROUNDS]]   SIZE of the data set
#                                                    (default 64M), ROUNDS
#                                                    (default 3)
#
# Method. The synthetic data set of package internal/benchdata (as in
# scripts/bench.sh and bench-lz4.sh) is generated; each of its parts is
# concatenated into one input file (images.bin: VM-image-like, random, text
# and zero records; logs.bin: text; bin.bin: binary-like). Each input is
# measured, each round all tools back to back:
#
#   - gzip -N, zstd -N: the file cut into 131072-byte files (split -b), all
#     compressed by one command, each file on its own (`gzip -N -c FILES`,
#     `zstd -N --single-thread -c FILES`, output thrown away), timed in CPU
#     seconds (user + system, GNU time; the files listed 4 times over, so
#     that the clock's 10 ms ticks do not matter): MB/s of input per CPU
#     second. On a busy machine CPU time is the fair figure per core.
#   - ddtsim: BenchmarkWriteBlocks of package zio (GOMAXPROCS=1, the best of
#     three runs of 0.3 s) on the same FILE cut into 131072-byte records,
#     each through zio.Writer.Write with release 2.3's rules (zstd levels 3
#     and more try LZ4 and zstd-1 first, as ZFS 2.2+ does: early abort), and
#     zstd-3 of release 2.1 (no early abort); MB/s of wall time and of CPU
#     time (cpu).
#
#   - C zlib (gzip levels only, when zlib1g-dev is installed):
#     BenchmarkBlocks of package compress/gzip (-tags zlib, GOMAXPROCS=1,
#     best of three runs of 0.3 s): the system's C zlib called as ZFS calls
#     deflate, beside the same benchmark of ddtsim's port of the kernel's
#     deflate, on the same records; "zlib cpu" is C zlib's MB/s of CPU
#     time, "port/zlib" the port's cpu figure there over C zlib's.
#
# ratio = ddtsim cpu MB/s ÷ the C tool's MB/s (above 1: ddtsim faster).
# gzip is the same pure-Go port of the kernel's deflate in every build.
# The default build measures the cgo zstd (zstd 1.4 compiled from
# github.com/DataDog/zstd, exact); CGO_ENABLED=0 or TAGS="nolibzstd"
# measures the pure-Go approximation (klauspost/compress). ZFS itself
# compresses with the kernel's deflate (gzip) and zstd 1.4.5; the C tools
# here are the system's (gzip 1.12's own deflate; libzstd 1.5).
set -euo pipefail

size=${1:-64M}
rounds=${2:-3}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

for tool in gzip zstd; do
	command -v $tool >/dev/null || { echo "bench-gzip-zstd: $tool is not installed (Debian: apt-get install $tool)" >&2; exit 1; }
done
[[ -x /usr/bin/time ]] || { echo "bench-gzip-zstd: needs GNU time (/usr/bin/time)" >&2; exit 1; }

# shellcheck source=scripts/blockbench.sh
. scripts/blockbench.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddtsim-bench-gz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

echo "bench-gzip-zstd: building the data generator and the zio test binary" >&2
go test -c -tags "${TAGS:-}" -o "$tmp/zio.test" ./zfs/zio
czlib=
if dpkg -s zlib1g-dev >/dev/null 2>&1; then
	go test -c -tags zlib -o "$tmp/gzip.test" ./zfs/compress/gzip && czlib=1
else
	echo "bench-gzip-zstd: zlib1g-dev is not installed: no C zlib column" >&2
fi
echo "bench-gzip-zstd: generating $size of data" >&2
bb_inputs "$size"
for part in "${inputs[@]}"; do
	mkdir "$tmp/$part.blocks"
	split -b 131072 -a 6 "$tmp/$part.bin" "$tmp/$part.blocks/b"
done

# c_mbs TOOL LEVEL PART: TOOL -LEVEL over PART's 128 KiB block files, MB/s of CPU time.
c_mbs() {
	local args=(-"$2" -c)
	[[ $1 == zstd ]] && args+=(-q --single-thread)
	local files=("$tmp/$3.blocks"/*)
	/usr/bin/time -f '%U %S' -o "$tmp/t" "$1" "${args[@]}" "${files[@]}" "${files[@]}" "${files[@]}" "${files[@]}" >/dev/null
	awk -v n="$((4 * $(stat -c %s "$tmp/$3.bin")))" '{ s = $1 + $2; if (s > 0) printf "%.1f\n", n / s / 1e6; else print "inf" }' "$tmp/t"
}

# go_mbs FILE: "NAME MB/s cpu-MB/s" of each zio case on FILE, the best of three.
go_mbs() { bb_go_mbs "$tmp/zio.test" BenchmarkWriteBlocks "$1" 0.3s 3; }

declare -A res
levels=(gzip-1 gzip-6 gzip-9 zstd-1 zstd-3 zstd-9 zstd-19)
for ((r = 1; r <= rounds; r++)); do
	echo "bench-gzip-zstd: round $r of $rounds" >&2
	for in in "${inputs[@]}"; do
		f="$tmp/$in.bin"
		for lv in "${levels[@]}"; do
			res["$in $lv C"]+="$(c_mbs "${lv%%-*}" "${lv#*-}" "$in")"$'\n'
		done
		while read -r name w c; do
			res["$in $name go"]+="$w"$'\n'
			res["$in $name gocpu"]+="$c"$'\n'
		done < <(go_mbs "$f")
		if [[ -n $czlib ]]; then
			while read -r name w c; do
				res["$in $name blk"]+="$c"$'\n'
			done < <(bb_go_mbs "$tmp/gzip.test" BenchmarkBlocks "$f" 0.3s 3)
		fi
	done
done


echo
zimpl="cgo libzstd (exact)"
if [[ $(go env CGO_ENABLED) != 1 || " $(tr , " " <<<"${TAGS:-}") " == *" nolibzstd "* ]]; then zimpl="pure Go (approximate)"; fi
echo "ddtsim build: zstd $zimpl; tags: ${TAGS:-none}"
echo "data: $size set of internal/benchdata, 131072-byte records; host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "MB/s on one core (10^6 input bytes/s), median of $rounds interleaved rounds"
printf '%-7s %-11s | %9s | %9s %9s | %6s | %9s %9s\n' input level "C tool" ddtsim "ddtsim cpu" ratio "zlib cpu" "port/zlib"
for in in "${inputs[@]}"; do
	for lv in "${levels[@]}" zstd-3-r2.1; do
		c=$(med "$in $lv C") g=$(med "$in $lv go") gc=$(med "$in $lv gocpu")
		z=$(med "$in czlib-$lv blk") p=$(med "$in $lv blk")
		printf '%-7s %-11s | %9s | %9s %9s | %6s | %9s %9s\n' "$in" "$lv" "${c:--}" "${g:--}" "${gc:--}" "$(ratio "$gc" "$c")" "${z:--}" "$(ratio "$p" "$z")"
	done
done
