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
# memory and on one core, cut into the same independent 131072-byte blocks
# (the last one shorter), by:
#
#   - lz4 -1: `lz4 -q -b1 -B131072 -i1 FILE`, the lz4 command's own benchmark
#     mode at level 1: it compresses each block on its own with
#     LZ4_compress_fast (acceleration 1, full-size output buffer), single
#     threaded, passes over the file for about one second and reports the
#     MB/s of its fastest pass (10^6 input bytes per second of wall time).
#   - C cpu: the same library call (LZ4_compress_fast, acceleration 1, from
#     the system's liblz4.so.1, called by a small C program built here with
#     gcc when both exist) timed in CPU time, fastest pass of about one
#     second: on a busy machine CPU time is the fairer per-core figure.
#   - Go: BenchmarkBlocks of compress/lz4 (a test binary built once, run with
#     GOMAXPROCS=1, five runs of 0.2 s) on the same FILE (DDTSIM_BENCH_FILES),
#     reporting MB/s of wall time and cpu-MB/s of CPU time, the best of the
#     five (lz4's fastest-pass rule): "Size" is the size-only path with ZFS's
#     capacity (131072 − 131072/8 bytes, as zio.Writer uses it: an
#     incompressible block stops at 7/8 of its input), "nolimit" the same with
#     a capacity that never fails (every block to its end, like C lz4),
#     "Compress" the full output with ZFS's capacity.
#
#   - ZFS C: ZFS's own compressor (LZ4_compressCtx and LZ4_compress64kCtx of
#     module/zfs/lz4_zfs.c, LZ4 r85: the algorithm Size reproduces) built
#     with gcc -O2 into a small harness and called as real_LZ4_compress is,
#     with ZFS's capacity, timed in CPU time like C cpu. The source is read
#     from $ZFS_LZ4_C (the file, or an OpenZFS checkout holding it), else
#     downloaded from github.com/openzfs/zfs at run time into the temporary
#     directory (nothing of it is kept); without it, no such column. This is
#     the yardstick of the same work: lz4 -1 runs a newer, different
#     algorithm (other hashes and steps), faster on some data, and its
#     lengths are not ZFS's.
#
# The machine may be shared and noisy: each round measures every input with
# every tool back to back (interleaved), and the table gives the median of
# the rounds. ratio = Go Size ÷ lz4 -1 (wall time); cpu ratio = Go Size ÷
# C cpu (CPU time); zfs ratio = Go Size ÷ ZFS C (CPU time).
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

# shellcheck source=scripts/blockbench.sh
. scripts/blockbench.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddtsim-bench-lz4.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

echo "bench-lz4: building the data generator and the compress/lz4 test binary" >&2
go test -c -o "$tmp/lz4.test" ./zfs/compress/lz4

# The CPU-time harness of the C library, when gcc and liblz4.so.1 are here.
have_c=0
libl=$( (ldconfig -p 2>/dev/null || true) | awk '/liblz4\.so\.1 / { print $NF; exit }')
if command -v gcc >/dev/null && [[ -n $libl ]]; then
	cat >"$tmp/lz4cpu.c" <<'CSRC'
/* lz4cpu FILE: LZ4_compress_fast (acceleration 1, as lz4 -1) on FILE cut
   into independent 131072-byte blocks, passes for about one second of CPU
   time; prints the MB/s (10^6 input bytes/s) of the fastest pass in CPU
   time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int LZ4_compress_fast(const char *src, char *dst, int srcSize, int dstCapacity, int acceleration);
int LZ4_compressBound(int inputSize);

static double cpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	if (argc != 2) return 2;
	FILE *f = fopen(argv[1], "rb");
	if (!f) { perror(argv[1]); return 1; }
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *src = malloc(n + 1);
	if (fread(src, 1, n, f) != (size_t)n) { perror("read"); return 1; }
	fclose(f);
	int block = 131072, bound = LZ4_compressBound(block);
	char *dst = malloc(bound);
	double start = cpu(), best = 1e30;
	long long sink = 0;
	do {
		double t0 = cpu();
		for (long off = 0; off < n; off += block) {
			int len = n - off < block ? (int)(n - off) : block;
			sink += LZ4_compress_fast(src + off, dst, len, bound, 1);
		}
		double t = cpu() - t0;
		if (t < best) best = t;
	} while (cpu() - start < 1.0);
	printf("%.1f %lld\n", n / best / 1e6, sink);
	return 0;
}
CSRC
	if gcc -O2 -o "$tmp/lz4cpu" "$tmp/lz4cpu.c" "$libl" 2>"$tmp/gcc.err"; then
		have_c=1
	else
		echo "bench-lz4: could not build the C harness; no C cpu column:" >&2
		cat "$tmp/gcc.err" >&2
	fi
else
	echo "bench-lz4: no gcc or no liblz4.so.1; no C cpu column" >&2
fi

# ZFS's own LZ4 (see above), when its source can be had and gcc is here.
have_zfs=0
zsrc=${ZFS_LZ4_C:-}
if [[ -d $zsrc ]]; then
	zsrc=$zsrc/module/zfs/lz4_zfs.c
fi
if [[ -z $zsrc ]] && command -v curl >/dev/null; then
	zsrc=$tmp/lz4_zfs.c
	curl -fsSL --max-time 30 -o "$zsrc" https://raw.githubusercontent.com/openzfs/zfs/master/module/zfs/lz4_zfs.c 2>/dev/null || zsrc=
fi
if command -v gcc >/dev/null && [[ -n $zsrc && -f $zsrc ]]; then
	# The compressor's part of the file: from its tuning parameters to
	# real_LZ4_compress (ZFS's kernel glue left out).
	awk '/^#define[ \t]+COMPRESSIONLEVEL/ { on = 1 } /^real_LZ4_compress\(const/ { exit } on' "$zsrc" |
		sed '$d' >"$tmp/zfs_lz4_core.c"
	cat >"$tmp/zfslz4cpu.c" <<'CSRC'
/* zfslz4cpu FILE: ZFS's LZ4 (as real_LZ4_compress calls it: a zeroed table,
   the 64K variant under LZ4_64KLIMIT, capacity 7/8 of the block less the
   4-byte header) on FILE cut into 131072-byte blocks, passes for about one
   second of CPU time; prints the MB/s of the fastest pass in CPU time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define _LP64 1
#include "zfs_lz4_core.c"

static double cpu(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
	if (!f) return 1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc(n), *dst = malloc(131072);
	struct refTables *ctx = malloc(sizeof *ctx);
	if (!b || !dst || !ctx || fread(b, 1, n, f) != (size_t)n) return 1;
	double best = 0, spent = 0;
	long sum = 0;
	while (spent < 1) {
		double t = cpu();
		for (long off = 0; off < n; off += 131072) {
			int len = n - off < 131072 ? n - off : 131072;
			int osize = len - len / 8 - 4;
			memset(ctx, 0, sizeof *ctx);
			if (len < LZ4_64KLIMIT)
				sum += LZ4_compress64kCtx(ctx, b + off, dst, len, osize);
			else
				sum += LZ4_compressCtx(ctx, b + off, dst, len, osize);
		}
		t = cpu() - t;
		spent += t;
		if (n / t / 1e6 > best) best = n / t / 1e6;
	}
	printf("%.1f %ld\n", best, sum);
	return 0;
}
CSRC
	if gcc -O2 -o "$tmp/zfslz4cpu" "$tmp/zfslz4cpu.c" 2>"$tmp/gcc-zfs.err"; then
		have_zfs=1
	else
		echo "bench-lz4: could not build ZFS's LZ4 from $zsrc; no ZFS C column:" >&2
		cat "$tmp/gcc-zfs.err" >&2
	fi
else
	echo "bench-lz4: no gcc or no lz4_zfs.c (set ZFS_LZ4_C); no ZFS C column" >&2
fi

echo "bench-lz4: generating $size of data" >&2
bb_inputs "$size"

# c_mbs FILE: lz4 -1's compression MB/s on FILE in 128 KiB blocks.
c_mbs() {
	lz4 -q -b1 -B131072 -i1 "$1" 2>&1 | tr '\r' '\n' |
		awk '$1 == "-1" { for (i = 1; i <= NF; i++) if ($(i + 1) == "MB/s") { print $i; exit } }'
}

# go_mbs FILE: "NAME MB/s cpu-MB/s" of each Go benchmark on FILE, the best of five.
go_mbs() { bb_go_mbs "$tmp/lz4.test" BenchmarkBlocks "$1" 0.2s 5; }

declare -A res # "input column" -> newline-separated figures of the rounds
for ((r = 1; r <= rounds; r++)); do
	echo "bench-lz4: round $r of $rounds" >&2
	for in in "${inputs[@]}"; do
		f="$tmp/$in.bin"
		v=$(c_mbs "$f")
		[[ -n $v ]] || { echo "bench-lz4: no figure from lz4 -b1 on $in" >&2; exit 1; }
		res["$in lz4"]+="$v"$'\n'
		if ((have_c)); then
			res["$in ccpu"]+="$("$tmp/lz4cpu" "$f" | awk '{ print $1 }')"$'\n'
		fi
		if ((have_zfs)); then
			res["$in zfs"]+="$("$tmp/zfslz4cpu" "$f" | awk '{ print $1 }')"$'\n'
		fi
		while read -r name w c; do
			res["$in $name"]+="$w"$'\n'
			res["$in $name-cpu"]+="$c"$'\n'
		done < <(go_mbs "$f")
	done
done


echo
echo "data: $size set of internal/benchdata, 131072-byte blocks; host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "MB/s per core (10^6 input bytes/s), median of $rounds interleaved rounds: wall time, then CPU time (cpu)"
printf '%-7s | %8s %8s %8s %8s | %8s %8s %8s %8s %8s | %6s %6s %6s\n' input "lz4 -1" "Size" nolimit Compress \
	"C cpu" "ZFS C" "Size" nolimit Compress ratio "cpu" "zfs"
for in in "${inputs[@]}"; do
	c=$(med "$in lz4") s=$(med "$in Size") cc=$(med "$in ccpu") zc=$(med "$in zfs") sc=$(med "$in Size-cpu")
	printf '%-7s | %8s %8s %8s %8s | %8s %8s %8s %8s %8s | %6s %6s %6s\n' "$in" "$c" "$s" "$(med "$in Size-nolimit")" \
		"$(med "$in Compress")" "${cc:--}" "${zc:--}" "$sc" "$(med "$in Size-nolimit-cpu")" "$(med "$in Compress-cpu")" \
		"$(ratio "$s" "$c")" "$(ratio "$sc" "$cc")" "$(ratio "$sc" "$zc")"
done
