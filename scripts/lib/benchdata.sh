# benchdata.sh — sourced by the bench scripts: their set-up and the data
# set they measure.
#
# bench_setup NAME makes $tmp (removed at exit; an interrupt exits 130),
# builds $bin (this tree's ddtsim, or $BIN when set) and $pc (the page
# cache tool, scripts/cmd/pagecache). Run from the repository's root.
bench_setup() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddtsim-$1.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 130' INT TERM
	bin=${BIN:-$tmp/ddtsim}
	[[ -n ${BIN:-} ]] || go build -o "$bin" ./cmd/ddtsim
	go build -o "$tmp/pagecache" ./scripts/cmd/pagecache
	pc=$tmp/pagecache
}

#
# bench_data NAME SIZE TMP sets data to $DATA when it is set (kept as it
# is), else generates SIZE (K, M, G, T suffixes) of the synthetic data set
# of package internal/testutil/benchdata in TMP/data, after checking that
# TMP has SIZE and 1 GiB more free; NAME prefixes its messages. Run from
# the repository's root.
bench_data() {
	local name=$1 size=$2 tmp=$3 want avail
	if [[ -n ${DATA:-} ]]; then
		data=$DATA
		return
	fi
	go build -o "$tmp/gen" ./scripts/cmd/gen
	want=$(awk -v s="$size" 'BEGIN { n = s + 0; u = toupper(substr(s, length(s))); m = 1
		if (u == "K") m = 2^10; else if (u == "M") m = 2^20; else if (u == "G") m = 2^30; else if (u == "T") m = 2^40
		printf "%.0f", n * m / 1024 }')
	avail=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
	if ((avail < want + 1048576)); then
		echo "$name: $((avail / 1048576)) GiB free in $tmp; $size and 1 GiB more are needed" >&2
		exit 1
	fi
	echo "$name: generating $size of data in $tmp/data" >&2
	"$tmp/gen" -o "$tmp/data" -size "$size"
	data=$tmp/data
}
