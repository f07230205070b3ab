#!/usr/bin/env bash
# bench-hash.sh — what keying blocks (BLAKE3-256, ddt.KeyOf) costs per byte:
# the BLAKE3 libraries side by side in Go benchmarks, then whole scans with
# compression off against b3sum over the same bytes.
#
# Usage: scripts/bench-hash.sh [-h] [-s SIZE] [-n RUNS] [-B] [-C] [NAME=SPEC ...]
#
#   -s SIZE    random data for the whole commands (default 2G; K, M, G
#              suffixes), in 4 files in a temporary directory under $TMPDIR
#              (else /tmp), removed at exit; refused unless SIZE plus 1 GiB
#              is free there
#   -n RUNS    rounds (default 3): every figure is the median of RUNS, and
#              the rounds are interleaved (each round runs every row once),
#              so that a noisy machine slows all the rows alike
#   -B         leave out the Go benchmarks; -C leave out the whole commands
#   NAME=SPEC  a ddtsim to time, called NAME in the table: SPEC is an
#              executable, or a git revision (built with go build from a
#              copy of it); repeatable. Default: this work tree, as "ddtsim"
#
# The Go benchmarks (BenchmarkBLAKE3 in package ddt, compiled once) hash one
# block again and again, hot in cache as a worker's record is, at 4K, 8K,
# 128K and 1M; the table gives the CPU time (user+sys of the process, so it
# counts the goroutines a library may start) per byte, and its inverse in
# GB/s. The whole commands are `ddtsim -j 1 -o compression=off DIR` and
# `b3sum --no-mmap --num-threads 1 FILES` on the same files, page cache warm,
# timed with GNU time: user, sys, their sum (CPU), wall, CPU ns per byte, and
# each row's CPU over b3sum's (the "ratio").
#
# It installs what it lacks (b3sum, GNU time) with apt-get when it can.
# Example: scripts/bench-hash.sh -n 5 before=main after=HEAD
set -euo pipefail

size=2G
runs=3
micro=1
whole=1
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while getopts "hs:n:BC" opt; do
	case $opt in
	h) usage; exit 0 ;;
	s) size=$OPTARG ;;
	n) runs=$OPTARG ;;
	B) micro=0 ;;
	C) whole=0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench-hash: -n $runs: want a count" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bytes=$(numfmt --from=iec "$size") || { echo "bench-hash: -s $size: want a size such as 2G" >&2; exit 2; }

# --- tools ----------------------------------------------------------------

sudo=()
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null; then
	sudo=(sudo)
fi
apt_updated=0
# ensure_pkg TEST PKG: succeed if TEST (a command or an absolute path) is
# there, installing Debian package PKG first if needed and possible.
ensure_pkg() {
	local test=$1 pkg=$2
	have() { if [[ $test == /* ]]; then [[ -x $test ]]; else command -v "$test" >/dev/null; fi; }
	have && return 0
	command -v apt-get >/dev/null || return 1
	if ((!apt_updated)); then
		"${sudo[@]}" apt-get update -qq >&2 || true
		apt_updated=1
	fi
	echo "bench-hash: installing $pkg" >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$pkg" >&2 || return 1
	have
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-hash.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# median: the middle one of the numbers on stdin (the mean of the two
# middle ones for an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "host: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))," \
	"AVX-512: $(grep -q avx512f /proc/cpuinfo && echo yes || echo no); load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"

# --- Go benchmarks --------------------------------------------------------

if ((micro)); then
	echo "bench-hash: Go benchmarks, $runs rounds" >&2
	go test -c -o "$tmp/ddt.test" ./zfs/ddt
	for ((i = 0; i < runs; i++)); do
		"$tmp/ddt.test" -test.run '^$' -test.bench '^BenchmarkBLAKE3$' -test.benchtime 0.3s >>"$tmp/micro.txt"
	done
	# Lines: BenchmarkBLAKE3/IMPL/SIZE-P  N  T ns/op  S MB/s  C cpu-ns/B  ...
	echo
	echo "Go benchmarks: CPU ns per byte (GB/s), median of $runs, one block hashed again and again"
	awk '$1 ~ /^BenchmarkBLAKE3\// {
		split($1, p, "/"); sub(/-[0-9]+$/, "", p[3])
		for (i = 3; i <= NF; i++) if ($i == "cpu-ns/B") print p[2], p[3], $(i - 1)
	}' "$tmp/micro.txt" >"$tmp/micro.tsv"
	sizes=$(awk '{ print $2 }' "$tmp/micro.tsv" | awk '!seen[$0]++' | sort -h)
	printf '%-16s' "library/use"
	for s in $sizes; do printf ' %16s' "$s"; done
	echo
	for impl in $(awk '{ print $1 }' "$tmp/micro.tsv" | awk '!seen[$0]++'); do
		printf '%-16s' "$impl"
		for s in $sizes; do
			m=$(awk -v i="$impl" -v s="$s" '$1 == i && $2 == s { print $3 }' "$tmp/micro.tsv" | median)
			printf ' %16s' "$(awk -v m="$m" 'BEGIN { printf "%.3f (%.2f)", m, 1 / m }')"
		done
		echo
	done
fi

# --- whole commands -------------------------------------------------------

((whole)) || exit 0

ensure_pkg b3sum b3sum || { echo "bench-hash: b3sum is not available" >&2; exit 1; }
ensure_pkg /usr/bin/time time || { echo "bench-hash: GNU time (/usr/bin/time) is not available" >&2; exit 1; }

(($# > 0)) || set -- ddtsim=
names=()
for v in "$@"; do
	[[ $v == *=* && -n ${v%%=*} ]] || { echo "bench-hash: $v: want NAME=SPEC" >&2; exit 2; }
	name=${v%%=*} spec=${v#*=}
	case " ${names[*]} " in *" $name "*) echo "bench-hash: $name named twice" >&2; exit 2 ;; esac
	names+=("$name")
	if [[ -z $spec ]]; then
		echo "bench-hash: building ddtsim from the work tree" >&2
		go build -o "$tmp/bin-$name" ./cmd/ddtsim
	elif [[ -f $spec && -x $spec ]]; then
		cp "$spec" "$tmp/bin-$name"
	else
		rev=$(git rev-parse --verify --quiet "$spec^{commit}") || { echo "bench-hash: $spec: neither an executable nor a git revision" >&2; exit 2; }
		echo "bench-hash: building ddtsim at $spec (${rev:0:12})" >&2
		mkdir "$tmp/src-$name"
		git archive "$rev" | tar -x -C "$tmp/src-$name"
		(cd "$tmp/src-$name" && go build -o "$tmp/bin-$name" ./cmd/ddtsim)
		rm -rf "$tmp/src-$name"
	fi
done

avail=$(df --output=avail -B1 "$tmp" | tail -n 1)
if ((avail < bytes + (1 << 30))); then
	echo "bench-hash: $(numfmt --to=iec "$avail") free in $tmp: not enough for $size of data and 1 GiB to spare" >&2
	exit 1
fi
echo "bench-hash: writing $size of random data" >&2
mkdir "$tmp/data"
files=()
for i in 0 1 2 3; do
	n=$((bytes / 4 + (i < bytes % 4 ? 1 : 0)))
	head -c "$n" /dev/urandom >"$tmp/data/f$i"
	files+=("$tmp/data/f$i")
done
cat "${files[@]}" >/dev/null # warm the page cache

# Every ddtsim must print the same table.
first=
for name in "${names[@]}"; do
	"$tmp/bin-$name" -j 1 -o compression=off --zdb "$tmp/data" >"$tmp/zdb-$name"
	if [[ -z $first ]]; then
		first=$name
	elif ! cmp -s "$tmp/zdb-$first" "$tmp/zdb-$name"; then
		echo "bench-hash: $first and $name print different tables" >&2
		exit 1
	fi
done

rows=("${names[@]}" b3sum)
for ((i = 0; i < runs; i++)); do
	echo "bench-hash: round $((i + 1)) of $runs" >&2
	for name in "${rows[@]}"; do
		if [[ $name == b3sum ]]; then
			cmd=(b3sum --no-mmap --num-threads 1 "${files[@]}")
		else
			cmd=("$tmp/bin-$name" -j 1 -o compression=off "$tmp/data")
		fi
		/usr/bin/time -f '%U %S %e' -o "$tmp/time" "${cmd[@]}" >/dev/null || { echo "bench-hash: $name failed" >&2; exit 1; }
		tail -n 1 "$tmp/time" >>"$tmp/whole-$name"
	done
done

echo
echo "whole commands on $(numfmt --to=iec "$bytes") of random data in 4 files, page cache warm; median of $runs:"
echo "  ddtsim -j 1 -o compression=off DIR    b3sum --no-mmap --num-threads 1 FILES  ($(b3sum --version))"
printf '%-16s %8s %8s %8s %8s %9s %7s\n' "command" "user s" "sys s" "CPU s" "wall s" "CPU ns/B" "ratio"
b3cpu=$(awk '{ print $1 + $2 }' "$tmp/whole-b3sum" | median)
for name in "${rows[@]}"; do
	f=$tmp/whole-$name
	user=$(awk '{ print $1 }' "$f" | median)
	sys=$(awk '{ print $2 }' "$f" | median)
	cpu=$(awk '{ print $1 + $2 }' "$f" | median)
	wall=$(awk '{ print $3 }' "$f" | median)
	awk -v n="$name" -v u="$user" -v s="$sys" -v c="$cpu" -v w="$wall" -v b="$bytes" -v r="$b3cpu" \
		'BEGIN { printf "%-16s %8.2f %8.2f %8.2f %8.2f %9.3f %7.2f\n", n, u, s, c, w, c * 1e9 / b, c / r }'
done
echo "(CPU = user + sys, the median of the sums; ratio = CPU / b3sum's CPU)"
