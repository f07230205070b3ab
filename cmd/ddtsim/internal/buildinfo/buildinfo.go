// Package buildinfo says which ddtsim a binary is, for `ddtsim --version`,
// bug reports and the JSON report: the module version and commit it was
// built from (runtime/debug.ReadBuildInfo, which go build stamps from the
// module and from git; a release build overrides both with -ldflags -X),
// the Go toolchain and platform, the zstd compiled in (exact libzstd with
// cgo, an approximation without) and the OpenZFS release modelled when
// --release is not given.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Set by release builds (scripts/release.sh) with
//
//	-ldflags "-X github.com/ddtsim/ddtsim/cmd/ddtsim/internal/buildinfo.version=v1.2.3
//	          -X github.com/ddtsim/ddtsim/cmd/ddtsim/internal/buildinfo.commit=HASH[-dirty]"
//
// Empty (the usual build): taken from the stamped build information.
var version, commit string

// Info identifies a ddtsim binary.
type Info struct {
	// Version is the module version: the release's tag (v1.2.3) for a
	// release build or `go install ...@v1.2.3`, the pseudo-version go build
	// derives from git for a checkout (v0.0.0-TIME-REV, +dirty when the tree
	// had changes), or "(devel)" when neither is known.
	Version string `json:"version"`
	// Commit is the git revision built (40 hex digits), followed by
	// "-dirty" when the work tree had uncommitted changes; "unknown" when
	// the build recorded none (go test, go run of a file list, -buildvcs=false,
	// `go install ...@version`, which builds from the module zip).
	Commit string `json:"commit"`
	// Go is the toolchain that built the binary (runtime.Version, e.g.
	// "go1.26.8").
	Go string `json:"go"`
	// Platform is GOOS/GOARCH, e.g. "linux/amd64".
	Platform string `json:"platform"`
	// Cgo says whether the binary was built with cgo (CGO_ENABLED=1).
	Cgo bool `json:"cgo"`
	// Zstd names the zstd implementation compiled in: exact libzstd with
	// cgo, an approximation in pure Go without (zstd.Implementation).
	Zstd string `json:"zstd"`
	// ZstdExact is zstd.Exact: whether zstd figures are ZFS's byte for byte.
	ZstdExact bool `json:"zstd_exact"`
	// DefaultRelease is the OpenZFS release modelled when --release is
	// not given (zio.ResolveRelease("latest")), e.g. "2.4.4"; DefaultRules
	// is the row of the release table that models it (zio.DefaultRelease),
	// e.g. "2.4".
	DefaultRelease string `json:"default_release"`
	DefaultRules   string `json:"default_release_rules"`
}

// Get returns the running binary's Info.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return fromBuildInfo(bi, version, commit)
}

// fromBuildInfo is Get with the build information bi (nil: none recorded)
// and the -ldflags overrides ldVersion and ldCommit (empty: not given).
func fromBuildInfo(bi *debug.BuildInfo, ldVersion, ldCommit string) Info {
	in := Info{
		Version:      "(devel)",
		Commit:       "unknown",
		Go:           runtime.Version(),
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
		Zstd:         zstd.Implementation,
		ZstdExact:    zstd.Exact,
		DefaultRules: zio.DefaultRelease.Name,
	}
	if _, full, err := zio.ResolveRelease("latest"); err == nil {
		in.DefaultRelease = full
	}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			in.Version = v
		}
		if bi.GoVersion != "" {
			in.Go = bi.GoVersion
		}
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "CGO_ENABLED":
				in.Cgo = s.Value == "1"
			}
		}
		if rev != "" {
			in.Commit = rev
			if modified {
				in.Commit += "-dirty"
			}
		}
	}
	if ldVersion != "" {
		in.Version = ldVersion
	}
	if ldCommit != "" {
		in.Commit = ldCommit
	}
	return in
}

// Text is Info as `ddtsim --version` prints it: the version on the first
// line, then one "name: value" line each.
func (in Info) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ddtsim %s\n", in.Version)
	fmt.Fprintf(&b, "commit:   %s\n", in.Commit)
	fmt.Fprintf(&b, "go:       %s %s\n", in.Go, in.Platform)
	fmt.Fprintf(&b, "zstd:     %s", in.Zstd)
	if !in.ZstdExact {
		b.WriteString("; zstd figures are marked approximate (built without cgo)")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "release:  OpenZFS %s modelled by default (rules of %s; --release to choose, --release list)\n", in.DefaultRelease, in.DefaultRules)
	return b.String()
}
