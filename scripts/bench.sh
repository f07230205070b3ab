#!/usr/bin/env bash
# bench.sh — compare ddtsim's throughput with plain hashing and compression
# tools on the same synthetic data set (package internal/benchdata).
#
# Usage: scripts/bench.sh [SIZE]      SIZE defaults to 256M (K, M, G suffixes)
#
# It installs what it lacks (b3sum, lz4, GNU time) with apt-get when it can,
# builds ddtsim and the data generator, writes SIZE bytes of data into a
# temporary directory, reads it once to warm the page cache, then times each
# tool three times on the same bytes and prints the medians: wall seconds,
# MB/s (10^6 bytes of file data per second) and peak RSS (MiB, of the largest
# single process of the command). The temporary directory is removed at exit.
# Then, with the bound ratio (ddtsim's wall time over that of b3sum and lz4 -1,
# one thread each, divided among the cores): RANDOM_SIZE (default 2G) of
# random data, ddtsim against b3sum --no-mmap --num-threads 1; the guest-disk
# formats; FILES (default 300000) small files, files/s of ddtsim against
# find | xargs b3sum, one and all cores. BASE=path/to/ddtsim adds rows for
# another build (e.g. an older commit's) in the small-files table, measured
# in the same run. QDDA=path/to/qdda (or a qdda on PATH) adds the peer's
# rows on the mixed and the random data: qdda (github.com/outrunnl/qdda, the
# quick & dirty dedupe analyzer: 16 KiB blocks, MD5, LZ4 or deflate, a SQLite
# database) run as `qdda -q -b 0 -d DB FILE...` (-b 0: no bandwidth
# throttle), its database in the temporary directory. It does no ZFS model
# and its blocks are not ZFS's records: the row is the closest peer doing
# the same kind of job, not the same work.
set -euo pipefail

size=${1:-256M}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

runs=3

# --- tools ----------------------------------------------------------------

sudo=()
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null; then
	sudo=(sudo)
fi
apt_updated=0

# candidate PKG: the version apt would install, or nothing.
candidate() {
	local c
	c=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }')
	[[ -n $c && $c != "(none)" ]] && echo "$c"
	return 0
}

# ensure_pkg TEST PKG: succeed if TEST (a command or an absolute path) is
# available, installing Debian package PKG first if needed and possible.
ensure_pkg() {
	local test=$1 pkg=$2
	have() { if [[ $test == /* ]]; then [[ -x $test ]]; else command -v "$test" >/dev/null; fi; }
	have && return 0
	command -v apt-get >/dev/null || return 1
	if [[ -z $(candidate "$pkg") && $apt_updated -eq 0 ]]; then
		echo "bench: apt-get update" >&2
		"${sudo[@]}" apt-get update -qq >&2 || true
		apt_updated=1
	fi
	if [[ -z $(candidate "$pkg") ]]; then
		return 1
	fi
	echo "bench: installing $pkg" >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$pkg" >&2 || return 1
	have
}

have_b3sum=1
if ! ensure_pkg b3sum b3sum; then
	echo "bench: b3sum is not packaged here (apt-cache policy b3sum has no candidate); skipping the b3sum rows" >&2
	have_b3sum=0
fi
have_lz4=1
if ! ensure_pkg lz4 lz4; then
	echo "bench: lz4 is not available; skipping the lz4 row" >&2
	have_lz4=0
fi
have_gnutime=1
if ! ensure_pkg /usr/bin/time time; then
	echo "bench: /usr/bin/time (package time) is not available; peak RSS will not be reported" >&2
	have_gnutime=0
fi

# --- data -------------------------------------------------------------------

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddtsim-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

echo "bench: building ddtsim and the data generator" >&2
go build -o "$tmp/ddtsim" ./cmd/ddtsim
go build -o "$tmp/gen" ./scripts/cmd/gen

echo "bench: generating $size of data" >&2
"$tmp/gen" -o "$tmp/data" -size "$size"
bytes=$(find "$tmp/data" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }')
nfiles=$(find "$tmp/data" -type f | wc -l)

echo "bench: warming the page cache" >&2
find "$tmp/data" -type f -print0 | xargs -0 cat >/dev/null

# The commands below run under bash -c with these in the environment.
export D="$tmp/data" B="$tmp/ddtsim"

# Sanity check: the parallel and the serial scan print the same table.
if ! cmp -s <("$B" --zdb "$D") <("$B" --zdb -j 1 "$D"); then
	echo "bench: ddtsim --zdb and ddtsim --zdb -j 1 print different tables" >&2
	exit 1
fi

# --- measurements -----------------------------------------------------------

# median: the middle one of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

rows=()

# measure LABEL COMMAND: run COMMAND (a bash -c string) $runs times and add a
# row of medians to the table.
measure() {
	local label=$1 cmd=$2 walls=() rsss=() i t0 t1 rss
	echo "bench: $label" >&2
	for ((i = 0; i < runs; i++)); do
		t0=$EPOCHREALTIME
		if ((have_gnutime)); then
			if ! /usr/bin/time -f '%e %M' -o "$tmp/time" bash -c "$cmd"; then
				echo "bench: $label failed" >&2
				exit 1
			fi
		else
			bash -c "$cmd" || { echo "bench: $label failed" >&2; exit 1; }
		fi
		t1=$EPOCHREALTIME
		walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
		if ((have_gnutime)); then
			rss=$(tail -n 1 "$tmp/time" | awk '{ printf "%.1f", $2 / 1024 }')
			rsss+=("$rss")
		fi
	done
	local wall mbs rss_med="-"
	wall=$(printf '%s\n' "${walls[@]}" | median)
	# per: what one unit of the rate column is (1e6 bytes: MB/s; 1: files/s with bytes a count of files)
	mbs=$(awk -v n="$bytes" -v s="$wall" -v d="${per:-1e6}" 'BEGIN { if (s > 0) printf "%.0f", n / d / s; else print "inf" }')
	if ((have_gnutime)); then
		rss_med=$(printf '%s\n' "${rsss[@]}" | median)
	fi
	rows+=("$(printf '%-38s %8s %8s %9s' "$label" "$wall" "$mbs" "$rss_med")")
	med[$label]=$wall
}
declare -A med # label → median wall seconds

cpus=$(nproc)
measure "ddtsim --zdb (all $cpus cores)" '"$B" --zdb "$D" >/dev/null'
measure "ddtsim --zdb -j 1" '"$B" --zdb -j 1 "$D" >/dev/null'
measure "ddtsim -o compression=off --zdb" '"$B" -o compression=off --zdb "$D" >/dev/null'
if ((have_b3sum)); then
	# --no-mmap: b3sum's default mmap is slower than its reads on a warm cache.
	measure "b3sum --no-mmap --num-threads 1" 'find "$D" -type f -print0 | xargs -0 b3sum --no-mmap --num-threads 1 >/dev/null'
	measure "b3sum --num-threads 1" 'find "$D" -type f -print0 | xargs -0 b3sum --num-threads 1 >/dev/null'
	measure "b3sum (all threads)" 'find "$D" -type f -print0 | xargs -0 b3sum >/dev/null'
fi
if ((have_lz4)); then
	lz4_threads=""
	if lz4 -h 2>&1 | grep -q -- '-T#'; then
		lz4_threads="-T1" # lz4 ≥ 1.10 may use several threads by default
	fi
	measure "lz4 -1 (1 thread, cat | lz4)" "find \"\$D\" -type f -print0 | xargs -0 cat | lz4 -1 $lz4_threads -c >/dev/null"
fi

# The peer, when it is here (see the header).
qdda=${QDDA:-$(command -v qdda || true)}
if [[ -n $qdda && -x $qdda ]]; then
	export Q=$qdda QDB="$tmp/qdda.db" QL="$tmp/qdda.files"
	find "$D" -type f | sort >"$QL"
	# One call with every file (a directory is not read by qdda), which
	# it opens all at once: the open-file limit raised to the hard one,
	# and no row when the files are more than that.
	if ((nfiles + 64 < $(ulimit -Hn))); then
		measure "qdda -b 0 (its own threads)" 'ulimit -n "$(ulimit -Hn)"; mapfile -t f <"$QL"; "$Q" -q -b 0 -d "$QDB" "${f[@]}" >/dev/null'
	else
		echo "bench: no qdda row on the mixed data: it opens every file at once, and $nfiles files pass the limit of $(ulimit -Hn) open files" >&2
	fi
else
	qdda=""
fi

bound=""
if ((have_b3sum && have_lz4)); then
	# The bound: what hashing and LZ4 alone cost on these bytes, spread over
	# the cores; ddtsim's wall time over it (1.00 = as fast as the work itself).
	bound=$(awk -v a="${med["ddtsim --zdb (all $cpus cores)"]}" -v h="${med["b3sum --no-mmap --num-threads 1"]}" \
		-v z="${med["lz4 -1 (1 thread, cat | lz4)"]}" -v c="$cpus" 'BEGIN { printf "%.2f", a / ((h + z) / c) }')
fi

# --- random data: the yardstick of the issue ------------------------------------
# RANDOM_SIZE (default 2G) of random bytes in 4 files: nothing compresses or
# dedups, so the work is reading, hashing and LZ4 giving up. ddtsim on all
# cores against b3sum --no-mmap on one.
random_rows=()
if ((have_b3sum)); then
	rbytes=$(numfmt --from=iec "${RANDOM_SIZE:-2G}")
	export R="$tmp/random"
	mkdir -p "$R"
	echo "bench: writing ${RANDOM_SIZE:-2G} of random data" >&2
	for i in 1 2 3 4; do
		head -c $((rbytes / 4)) /dev/urandom >"$R/r$i"
	done
	cat "$R"/* >/dev/null
	saved_rows=("${rows[@]}")
	saved_bytes=$bytes
	rows=()
	bytes=$(((rbytes / 4) * 4))
	measure "ddtsim --zdb (lz4, all $cpus cores)" '"$B" --zdb "$R" >/dev/null'
	measure "ddtsim --zdb -j 1 -o compression=off" '"$B" --zdb -j 1 -o compression=off "$R" >/dev/null'
	measure "b3sum --no-mmap --num-threads 1" 'b3sum --no-mmap --num-threads 1 "$R"/* >/dev/null'
	if [[ -n $qdda ]]; then
		measure "qdda -b 0 (its own threads)" '"$Q" -q -b 0 -d "$QDB" "$R"/* >/dev/null'
	fi
	random_rows=("${rows[@]}")
	random_ratio=$(awk -v a="${med["ddtsim --zdb (lz4, all $cpus cores)"]}" -v b="${med["b3sum --no-mmap --num-threads 1"]}" 'BEGIN { printf "%.2f", a / b }')
	random_bytes=$bytes
	rows=("${saved_rows[@]}")
	bytes=$saved_bytes
	rm -rf "$R"
fi

# --- guest disks (--guest) ----------------------------------------------------
# The data set's VM-like images as qcow2 (plain, zlib- and zstd-compressed
# clusters), streamOptimized VMDK and VHDX, each scanned as the guests'
# disks onto volumes; the raw images are the baseline. Then an empty 1 TiB
# thin qcow2. Needs qemu-img (Debian: qemu-utils).
guest_rows=()
if ensure_pkg qemu-img qemu-utils; then
	export G="$tmp/guest"
	mkdir -p "$G"
	for f in qcow2 qcow2-zlib qcow2-zstd vmdk-stream vhdx; do
		mkdir "$G/$f"
		for r in "$D"/images/*.raw; do
			out="$G/$f/$(basename "$r" .raw)"
			case $f in
			qcow2) qemu-img convert -q -f raw -O qcow2 "$r" "$out.qcow2" ;;
			qcow2-zlib) qemu-img convert -q -c -f raw -O qcow2 "$r" "$out.qcow2" ;;
			qcow2-zstd) qemu-img convert -q -c -f raw -O qcow2 -o compression_type=zstd "$r" "$out.qcow2" ;;
			vmdk-stream) qemu-img convert -q -f raw -O vmdk -o subformat=streamOptimized "$r" "$out.vmdk" ;;
			vhdx) qemu-img convert -q -f raw -O vhdx "$r" "$out.vhdx" ;;
			esac
		done
	done
	qemu-img create -q -f qcow2 "$G/thin-1T.qcow2" 1T
	cat "$G"/*/* >/dev/null
	all_rows=("${rows[@]}")
	all_bytes=$bytes
	rows=()
	bytes=$(find "$D/images" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }')
	measure "raw images, --zvol" '"$B" --zdb --zvol "$D/images" >/dev/null'
	for f in qcow2 qcow2-zlib qcow2-zstd vmdk-stream vhdx; do
		measure "$f, --guest --zvol" "\"\$B\" --zdb --guest --zvol \"\$G/$f\" >/dev/null"
	done
	guest_bytes=$bytes
	bytes=$((1 << 40)) # its MB/s: of the guest's terabyte (all holes)
	measure "empty 1 TiB thin qcow2, --guest --zvol" '"$B" --zdb --guest --zvol "$G/thin-1T.qcow2" >/dev/null'
	guest_rows=("${rows[@]}")
	rows=("${all_rows[@]}")
	bytes=$all_bytes
else
	echo "bench: qemu-img is not available; skipping the guest-disk rows" >&2
fi

# --- small files ----------------------------------------------------------------
# FILES (default 300000) files of 1 to 512 bytes (scripts/cmd/gentree),
# page cache warm: the cost per file, against b3sum over the same files.
echo "bench: writing ${FILES:-300000} small files" >&2
go build -o "$tmp/gentree" ./scripts/cmd/gentree
export T="$tmp/tree"
"$tmp/gentree" -o "$T" -files "${FILES:-300000}"
find "$T" -type f -print0 | xargs -0 cat >/dev/null
saved_rows=("${rows[@]}")
saved_bytes=$bytes
rows=()
bytes=${FILES:-300000}
per=1
measure "ddtsim --zdb (all $cpus cores)" '"$B" --zdb "$T" >/dev/null'
measure "ddtsim --zdb -j 1" '"$B" --zdb -j 1 "$T" >/dev/null'
if [[ -n ${BASE:-} ]]; then
	export BASE
	measure "BASE ddtsim --zdb (all $cpus cores)" '"$BASE" --zdb "$T" >/dev/null'
	measure "BASE ddtsim --zdb -j 1" '"$BASE" --zdb -j 1 "$T" >/dev/null'
fi
if ((have_b3sum)); then
	measure "find | xargs b3sum --no-mmap" 'find "$T" -type f -print0 | xargs -0 b3sum --no-mmap --num-threads 1 >/dev/null'
	measure "find | xargs -P$cpus b3sum --no-mmap" "find \"\$T\" -type f -print0 | xargs -0 -P$cpus -n 2000 b3sum --no-mmap --num-threads 1 >/dev/null"
fi
unset per
files_rows=("${rows[@]}")
rows=("${saved_rows[@]}")
bytes=$saved_bytes
rm -rf "$T"

# --- report -----------------------------------------------------------------

echo
echo "data: $(awk -v n="$bytes" 'BEGIN { printf "%.1f MiB", n / 1048576 }') ($bytes bytes) in $nfiles files; page cache warm"
echo "host: $cpus CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; median of $runs runs"
printf '%-38s %8s %8s %9s\n' "tool" "wall s" "MB/s" "RSS MiB"
printf '%s\n' "${rows[@]}"
if [[ -n $bound ]]; then
	echo "bound ratio: ddtsim wall / ((b3sum --no-mmap + lz4 -1, one thread each) / $cpus cores) = $bound"
fi
if ((${#guest_rows[@]})); then
	echo
	echo "guest disks: the data set's VM-like images, $(awk -v n="$guest_bytes" 'BEGIN { printf "%.1f MiB", n / 1048576 }') of guest data, in each format (MB/s of guest bytes)"
	printf '%-38s %8s %8s %9s\n' "images" "wall s" "MB/s" "RSS MiB"
	printf '%s\n' "${guest_rows[@]}"
fi
if ((${#random_rows[@]})); then
	echo
	echo "random data: $(awk -v n="$random_bytes" 'BEGIN { printf "%.1f MiB", n / 1048576 }') in 4 files, page cache warm"
	printf '%-38s %8s %8s %9s\n' "tool" "wall s" "MB/s" "RSS MiB"
	printf '%s\n' "${random_rows[@]}"
	echo "ddtsim (lz4, all cores) / b3sum --no-mmap --num-threads 1, wall: $random_ratio"
fi
echo
echo "small files: ${FILES:-300000} files of 1 to 512 bytes in $(((${FILES:-300000} + 999) / 1000)) directories, page cache warm"
printf '%-38s %8s %8s %9s\n' "tool" "wall s" "files/s" "RSS MiB"
printf '%s\n' "${files_rows[@]}"
