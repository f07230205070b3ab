//go:build !linux && !darwin

package saved

import "errors"

// exchange: no atomic swap of two directories here (FreeBSD, illumos,
// Windows): replace moves the old one aside and the new one in, two
// renames.
func exchange(tmp, path string) error {
	return errors.New("no exchanging rename on this platform")
}
