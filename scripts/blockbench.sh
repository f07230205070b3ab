# blockbench.sh — what bench-lz4.sh and bench-gzip-zstd.sh share: the data
# set cut into one input file per part, the Go block benchmarks' best
# figures, medians and ratios. Sourced, not run; the caller sets `tmp` (a
# temporary directory) and keeps its figures in the associative array `res`
# ("input column" → the rounds' figures, one a line).

# bb_inputs SIZE: generates SIZE of package internal/benchdata's data set
# into $tmp/data and concatenates each part's files in name order into
# $tmp/PART.bin (images: VM-image-like, random, text and zero records;
# logs: text; bin: binary-like); sets the array `inputs` to the parts.
bb_inputs() {
	go build -o "$tmp/gen" ./scripts/cmd/gen
	"$tmp/gen" -o "$tmp/data" -size "$1"
	inputs=()
	local part
	for part in images logs bin; do
		find "$tmp/data/$part" -type f -print0 | sort -z | xargs -0 cat >"$tmp/$part.bin"
		inputs+=("$part")
	done
}

# median: the middle one of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# bb_go_mbs TESTBIN BENCH FILE TIME COUNT: runs benchmark BENCH of the test
# binary TESTBIN (one built with internal/compresstest.BenchBlocks) on FILE
# (DDTSIM_BENCH_FILES), GOMAXPROCS=1, COUNT runs of TIME each; prints "CASE
# MB/s cpu-MB/s" for each case, the best of the runs.
bb_go_mbs() {
	local base
	base=$(basename "$3")
	DDTSIM_BENCH_FILES=$3 GOMAXPROCS=1 "$1" -test.run '^$' \
		-test.bench "^$2/${base//./\\.}/" -test.benchtime "$4" -test.count "$5" |
		awk -v b="$2" 'index($1, b "/") == 1 {
			split($1, n, "/"); k = n[3] # GOMAXPROCS=1: no -N suffix
			for (i = 1; i <= NF; i++) {
				if ($(i + 1) == "MB/s" && $i + 0 > w[k] + 0) w[k] = $i
				if ($(i + 1) == "cpu-MB/s" && $i + 0 > c[k] + 0) c[k] = $i
			}
		}
		END { for (k in w) print k, w[k], (k in c) ? c[k] : "-" }'
}

# med KEY: the median of res[KEY]'s figures.
med() { printf '%s' "${res["$1"]:-}" | median; }

# ratio A B: A / B to two decimals, "-" unless both are positive numbers.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
