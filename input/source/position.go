package source

import "os"

// Position is a place in a Walker's walk order, the order in which it
// yields files: the paths named in the order given (Arg, their index);
// below a directory, its entries sorted by name (bytewise, as
// os.ReadDir sorts them), a subdirectory's whole walk at its name's place
// (depth first). A scan's progress is kept as the position up to which
// every file is done, plus the few files in flight after it, so that it
// needs no memory per file.
type Position struct {
	Arg  int    `json:"arg"`  // index of the path named (File.Arg)
	Path string `json:"path"` // File.Path: the path as the walk reached it
}

// Compare returns −1 when a comes before b in the walk order, +1 when
// after, 0 when they are the same place. Within one path named, the paths
// are compared component by component ("d/a/x" before "d/a.txt": the
// directory d/a is walked at the place of its name, before a.txt), which
// is the walk's order for paths it built by filepath.Join from the same
// path named.
func (a Position) Compare(b Position) int {
	switch {
	case a.Arg < b.Arg:
		return -1
	case a.Arg > b.Arg:
		return 1
	}
	return comparePaths(a.Path, b.Path)
}

// comparePaths compares two paths component by component, each component
// bytewise; a path comes before the paths below it. The components are
// separated as the system separates them (os.IsPathSeparator: "/", and on
// Windows "\\" too, which the walk's filepath.Join puts there).
func comparePaths(x, y string) int {
	for {
		if x == y {
			return 0
		}
		cx, restX, moreX := cutSlash(x)
		cy, restY, moreY := cutSlash(y)
		if cx != cy {
			if cx < cy {
				return -1
			}
			return 1
		}
		switch {
		case !moreX:
			return -1 // x is an ancestor of y
		case !moreY:
			return 1
		}
		x, y = restX, restY
	}
}

// cutSlash splits p at its first separator: the component before it, the
// rest after it, and whether there was one.
func cutSlash(p string) (string, string, bool) {
	for i := 0; i < len(p); i++ {
		if os.IsPathSeparator(p[i]) {
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}
