package testseam

// SaveFault, when set, runs before package scanfile creates each file of
// a saved scan (its partition files and manifest, name being the path of
// the file in the directory being written); a non-nil error fails the
// creation, as a full disk (ENOSPC) would.
var SaveFault func(name string) error
