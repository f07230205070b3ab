#!/usr/bin/env bash
# Builds ddtsim's release binaries into dist/, with SHA256SUMS.
#
#   scripts/release.sh [VERSION]          every target
#   TARGETS="linux/amd64 linux/arm64" scripts/release.sh v1.2.0
#
# VERSION defaults to the git tag (git describe --tags --dirty), else a
# Go pseudo-version of HEAD (v0.0.0-YYYYMMDDhhmmss-abcdef012345). The
# version and the commit (HEAD, -dirty with uncommitted changes) are set
# with -ldflags -X, and ddtsim --version prints them.
#
# Linux binaries are built with cgo and linked statically, so that zstd is
# the exact one (libzstd, compiled from the sources github.com/DataDog/zstd
# bundles) and they run on any Linux without a C library:
#   linux/amd64  musl-gcc (Debian: musl-tools), -static
#   linux/arm64  aarch64-linux-gnu-gcc (Debian: gcc-aarch64-linux-gnu),
#                static glibc (ddtsim calls no NSS function: no user or
#                host lookups, which static glibc cannot do)
# The other targets are cross-compiled with CGO_ENABLED=0: zstd is the
# pure-Go approximation there, and their --version and every zstd figure
# say so (gzip, lz4, lzjb, zle and off are exact in every build).
#
# A target that fails to build is reported (its log in dist/logs/) and the
# others go on; the exit status is 1 if any failed. scripts/check-static.sh
# checks that a Linux binary needs no library (file, ldd, and a run in an
# empty chroot).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH

all_targets="linux/amd64 linux/arm64 freebsd/amd64 freebsd/arm64 illumos/amd64 darwin/arm64 darwin/amd64 windows/amd64"
targets=${TARGETS:-$all_targets}
dist=${DIST:-dist}
pkg=github.com/ddtsim/ddtsim/cmd/ddtsim/internal/buildinfo

commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	commit+=-dirty
fi
version=${1:-}
if [ -z "$version" ]; then
	version=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null) ||
		version=v0.0.0-$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S)-$(git rev-parse --short=12 HEAD)
fi

rm -rf "$dist"
mkdir -p "$dist/logs"
echo "ddtsim $version (commit $commit), $(go version | cut -d' ' -f3), into $dist/"

declare -A result
failed=0
for t in $targets; do
	os=${t%/*} arch=${t#*/}
	out=$dist/ddtsim-$version-$os-$arch
	[ "$os" = windows ] && out+=.exe
	ldflags="-s -w -X $pkg.version=$version -X $pkg.commit=$commit"
	env=(GOOS="$os" GOARCH="$arch" CGO_ENABLED=0)
	zstd="approximate (pure Go)"
	if [ "$os" = linux ]; then
		case $arch in
		amd64) cc=musl-gcc ;;
		arm64) cc=aarch64-linux-gnu-gcc ;;
		*) cc= ;;
		esac
		if [ -n "$cc" ] && command -v "$cc" >/dev/null; then
			env=(GOOS="$os" GOARCH="$arch" CGO_ENABLED=1 CC="$cc")
			ldflags+=" -linkmode external -extldflags -static"
			zstd="exact (libzstd, static cgo)"
		else
			echo "warning: $t: no $cc (apt-get install ${cc:+$([ "$arch" = amd64 ] && echo musl-tools || echo gcc-aarch64-linux-gnu)}): built without cgo, zstd approximate" >&2
		fi
	fi
	log=$dist/logs/$os-$arch.log
	t0=$SECONDS
	if env "${env[@]}" go build -trimpath -buildvcs=false -tags netgo,osusergo -ldflags "$ldflags" -o "$out" ./cmd/ddtsim >"$log" 2>&1; then
		result[$t]="ok     $(printf '%10d' "$(stat -c %s "$out")") bytes  zstd $zstd  $((SECONDS - t0)) s  $(basename "$out")"
		rm -f "$log"
	else
		failed=$((failed + 1))
		result[$t]="FAILED (log: $log): $(grep -m1 -v '^#' "$log")"
		rm -f "$out"
	fi
	printf '%-14s %s\n' "$t" "${result[$t]}"
done
rmdir "$dist/logs" 2>/dev/null

(cd "$dist" && ls ddtsim-* >/dev/null 2>&1 && sha256sum ddtsim-* >SHA256SUMS)
echo
echo "summary ($version):"
for t in $targets; do
	printf '  %-14s %s\n' "$t" "${result[$t]}"
done
[ -f "$dist/SHA256SUMS" ] && echo "  $dist/SHA256SUMS: $(wc -l <"$dist/SHA256SUMS") binaries"
if [ "$failed" -gt 0 ]; then
	echo "$failed of $(wc -w <<<"$targets") targets failed to build" >&2
	exit 1
fi
