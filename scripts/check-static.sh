#!/usr/bin/env bash
# Checks that a Linux release binary (scripts/release.sh) needs no library:
# file and ldd must call it static, and it must print the bundled sample's
# report inside an empty chroot holding only itself and testdata/sample
# (no libc, no /proc, no /tmp), the same report as `go run ./cmd/ddtsim`
# prints here (but for the memory line, which varies), and with
# -o compression=zstd-3 the zdb -S text of the exact zstd.
#
#   scripts/check-static.sh dist/ddtsim-*-linux-amd64 [dist/ddtsim-*-linux-arm64]
#
# An arm64 binary on an amd64 host runs under qemu-aarch64-static (Debian:
# qemu-user-static), copied into the chroot (it is static too). Needs root
# (chroot). Exit 1 if any check fails.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
[ $# -gt 0 ] || {
	echo "usage: $0 BINARY..." >&2
	exit 2
}

# The sample's report as this checkout's cgo build prints it: the default
# (lz4) and with zstd-3, whose figures only the exact libzstd reproduces.
want=$(mktemp) wantz=$(mktemp)
trap 'rm -f "$want" "$wantz"' EXIT
go run ./cmd/ddtsim testdata/sample | grep -v '^  memory ' >"$want" &&
	go run ./cmd/ddtsim --zdb -o compression=zstd-3 testdata/sample >"$wantz" || {
	echo "go run ./cmd/ddtsim testdata/sample failed" >&2
	exit 1
}

status=0
for bin in "$@"; do
	echo "== $bin"
	desc=$(file -b "$bin")
	echo "file: $desc"
	case $desc in
	*"statically linked"* | *"static-pie linked"*) ;;
	*) echo "FAIL: not static" && status=1 ;;
	esac
	echo "ldd: $(ldd "$bin" 2>&1 | head -1)"
	root=$(mktemp -d)
	cp "$bin" "$root/ddtsim"
	cp -r testdata/sample "$root/sample"
	run=(/ddtsim)
	case $desc in
	*aarch64* | *"ARM aarch64"*)
		if [ "$(uname -m)" != aarch64 ]; then
			q=$(command -v qemu-aarch64-static) || {
				echo "FAIL: no qemu-aarch64-static (apt-get install qemu-user-static)"
				status=1
				rm -rf "$root"
				continue
			}
			cp "$q" "$root/qemu"
			run=(/qemu /ddtsim)
		fi
		;;
	esac
	echo "chroot holds: $(cd "$root" && find . -type f | sort | tr '\n' ' ')"
	got=$(chroot "$root" "${run[@]}" /sample 2>&1 | grep -v '^  memory ')
	if [ "$got" = "$(cat "$want")" ]; then
		echo "chroot run: the sample's report, as go run prints it ($(wc -l <<<"$got") lines)"
	else
		echo "FAIL: chroot run differs:"
		diff <(echo "$got") "$want" | head -20
		status=1
	fi
	got=$(chroot "$root" "${run[@]}" --zdb -o compression=zstd-3 /sample 2>&1)
	if [ "$got" = "$(cat "$wantz")" ]; then
		echo "chroot run with zstd-3: the zdb -S text as the exact (cgo) build prints it"
	else
		echo "FAIL: chroot run with zstd-3 differs:"
		diff <(echo "$got") "$wantz" | head -20
		status=1
	fi
	echo "--version in the chroot:"
	chroot "$root" "${run[@]}" --version | sed 's/^/  /'
	rm -rf "$root"
done
exit $status
