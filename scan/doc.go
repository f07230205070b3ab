// Package scan is ddtsim's pipeline as a library: from the settings a user
// chooses (model.Settings) and the paths named to the simulated dedup
// table and its report, as `zdb -S` would print it for the same files on a
// real pool.
//
// Run walks the paths and fills the table (package analyzer), feeds the
// per-group breakdown (--by), keeps the progress for a saved scan (a
// position in the walk's order and the files in flight: saved.Tracker)
// and writes it at checkpoints and at the end (package saved), and can
// continue an interrupted saved scan. FromSaved gives the same Result for a saved or merged scan.
// Result.Report assembles what every front end prints (package report):
// the histogram, the summary, the sample's estimate, the DDT size.
//
//	res, err := scan.Run(ctx, model.Settings{Compression: "lz4"}, []string{"/srv/images"}, scan.Options{})
//	...
//	rep, err := res.Report(0)
//	io.WriteString(os.Stdout, rep.Zdb) // zdb -S's text, byte for byte
package scan
