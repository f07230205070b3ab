package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
)

// The build information go build stamps (module version, vcs settings)
// becomes the version and the commit, "-dirty" marking a modified tree;
// -ldflags -X values replace both; without any, "(devel)" and "unknown".
func TestFromBuildInfo(t *testing.T) {
	const rev = "40e5157ef70c1ba6da7b98009a2863131e738ebd"
	stamped := func(modified string) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261205131204-40e5157ef70c+dirty"},
			Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	cases := []struct {
		name                    string
		bi                      *debug.BuildInfo
		ldVersion, ldCommit     string
		version, commit, goVers string
		cgo                     bool
	}{
		{"clean checkout", stamped("false"), "", "", "v0.0.0-20261205131204-40e5157ef70c+dirty", rev, "go1.26.8", true},
		{"modified tree", stamped("true"), "", "", "v0.0.0-20261205131204-40e5157ef70c+dirty", rev + "-dirty", "go1.26.8", true},
		{"release build", stamped("true"), "v1.2.0", "0123abc", "v1.2.0", "0123abc", "go1.26.8", true},
		{"go install @version", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.1.0"},
			Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}}}, "", "", "v1.1.0", "unknown", "go1.26.1", false},
		{"go test", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "", "(devel)", "unknown", runtime.Version(), false},
		{"nothing recorded", nil, "", "", "(devel)", "unknown", runtime.Version(), false},
	}
	for _, c := range cases {
		in := fromBuildInfo(c.bi, c.ldVersion, c.ldCommit)
		if in.Version != c.version || in.Commit != c.commit || in.Go != c.goVers || in.Cgo != c.cgo {
			t.Errorf("%s: version %q commit %q go %q cgo %v, want %q %q %q %v", c.name, in.Version, in.Commit, in.Go, in.Cgo,
				c.version, c.commit, c.goVers, c.cgo)
		}
		if in.Zstd != zstd.Implementation || in.ZstdExact != zstd.Exact {
			t.Errorf("%s: zstd %q exact %v, want this build's %q %v", c.name, in.Zstd, in.ZstdExact, zstd.Implementation, zstd.Exact)
		}
	}
}

// The text names every field, one line each, the version first.
func TestText(t *testing.T) {
	in := Info{Version: "v1.2.0", Commit: "0123abc-dirty", Go: "go1.26.8", Platform: "freebsd/arm64",
		Zstd: "klauspost/compress (pure Go, approximate)", DefaultRelease: "2.4.4", DefaultRules: "2.4"}
	want := `ddtsim v1.2.0
commit:   0123abc-dirty
go:       go1.26.8 freebsd/arm64
zstd:     klauspost/compress (pure Go, approximate); zstd figures are marked approximate (built without cgo)
release:  OpenZFS 2.4.4 modelled by default (rules of 2.4; --release to choose, --release list)
`
	if got := in.Text(); got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
	in.ZstdExact, in.Zstd = true, "libzstd 1.4.4 (cgo, exact)"
	if got := in.Text(); !strings.Contains(got, "\nzstd:     libzstd 1.4.4 (cgo, exact)\n") {
		t.Errorf("exact zstd: %s", got)
	}
}
