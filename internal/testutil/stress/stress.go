// Package stress says whether the stress tests run: DDTSIM_STRESS=1
// (.ci/run sets it for a step of their own; a plain go test ./... leaves
// it unset). A leaf package, so that any package's tests can ask,
// the compressors' own among them (testkit imports zio, which imports
// the compressors). Tests call testkit.Stress, or On for a test whose
// default run is a representative part of what the stress run does.
package stress

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the stress tests on.
const Env = "DDTSIM_STRESS"

// On reports whether Env is 1.
func On() bool { return os.Getenv(Env) == "1" }

// Require skips the test unless On, saying how to run it.
func Require(t testing.TB) {
	t.Helper()
	if !On() {
		t.Skipf("stress test: set %s=1 to run it", Env)
	}
}
