package scan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// Validate refuses each bad option with an *OptionError naming the flag
// and the value, worded "OPTION VALUE: REASON"; Run refuses the same
// before scanning.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	testkit.Write(t, filepath.Join(dir, "f"), []byte("x"))
	inside := filepath.Join(dir, "spill")
	sample, err := model.Parse(model.Text{Sample: "1/4"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts          scan.Options
		set           model.Settings
		option, value string
		msg           string
	}{
		{scan.Options{Jobs: -1}, model.Settings{}, "--jobs", "-1", "--jobs -1: invalid (accepted: 0 for one per CPU, or 1 to 256)"},
		{scan.Options{Jobs: 257}, model.Settings{}, "--jobs", "257", "--jobs 257: invalid (accepted: 0 for one per CPU, or 1 to 256)"},
		{scan.Options{Shard: source.Shard{Index: 4, Count: 4}}, model.Settings{}, "--shard", "4/4", "--shard 4/4: index must be below the count (the shards of 4 runs are 0/4 to 3/4)"},
		{scan.Options{Shard: source.Shard{Index: 1, Count: 2}, By: "dir"}, model.Settings{}, "--shard", "1/2",
			"--shard 1/2: not with --by: a shard's breakdown covers only its share, and saved scans keep no breakdown, so merge could not add the shards' up"},
		{scan.Options{By: "owner"}, model.Settings{}, "--by", "owner", "--by owner: invalid (accepted: dir, ext, size, file)"},
		{scan.Options{By: "Ext"}, sample, "--by", "Ext", "--by Ext: not with --sample yet: a breakdown needs every block"},
		{scan.Options{By: "ext", Top: -1}, model.Settings{}, "--top", "-1", "--top -1: invalid (accepted: a number of groups, 1 or more; 0 lists them all)"},
		{scan.Options{Top: 3}, model.Settings{}, "--top", "3", "--top 3: needs --by: it keeps the largest groups of the breakdown"},
		{scan.Options{TmpDir: "/tmp"}, model.Settings{}, "--tmpdir", "/tmp", "--tmpdir /tmp: needs --mem SIZE: it is where --mem spills the table"},
		{scan.Options{TmpDir: inside, Mem: 1 << 20}, model.Settings{}, "--tmpdir", inside,
			"--tmpdir " + inside + ": lies inside " + dir + ", which is scanned: the scan would read its own spill runs; choose a directory elsewhere"},
	} {
		err := c.opts.Validate(c.set, []string{dir})
		var oe *scan.OptionError
		if !errors.As(err, &oe) || oe.Option != c.option || oe.Value != c.value || err.Error() != c.msg {
			t.Errorf("%+v: %v (%#v), want %q", c.opts, err, oe, c.msg)
			continue
		}
		_, err = scan.Run(context.Background(), c.set, []string{dir}, c.opts)
		var ue *scan.UsageError
		if !errors.As(err, &ue) || !errors.As(err, &oe) || err.Error() != c.msg {
			t.Errorf("Run with %+v: %v, want a usage error %q", c.opts, err, c.msg)
		}
	}
	for _, o := range []scan.Options{{}, {Jobs: 256}, {By: "DIR", Top: 2}, {Mem: 1 << 20, TmpDir: t.TempDir()}, {Shard: source.Shard{Index: 1, Count: 2}}} {
		if err := o.Validate(model.Settings{}, []string{dir}); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// OpenSaver refuses, before any scan, a directory that the scan would
// read or that would replace what it reads, one that is not a saved scan
// and one that cannot be written; it writes through a symlink.
func TestOpenSaver(t *testing.T) {
	top := t.TempDir()
	data := filepath.Join(top, "data")
	testkit.Write(t, filepath.Join(data, "f"), []byte("x"))
	text := filepath.Join(top, "text")
	testkit.Write(t, text, []byte("keep me\n"))
	// The reason for a folder that does not exist: the system's stat of
	// it, a separator after (Unix: "stat DIR/: no such file or directory").
	_, noSuch := os.Stat(filepath.Join(top, "no", "such") + string(filepath.Separator))
	for _, c := range []struct{ name, msg string }{
		{filepath.Join(data, "s"), "--save " + filepath.Join(data, "s") + ": lies inside " + data + ", which is scanned: save it elsewhere"},
		{top, "--save " + top + ": the path scanned " + data + " lies inside it, and saving replaces it: save elsewhere"},
		{text, "--save " + text + ": it exists and is not a ddtsim saved scan: refusing to overwrite it (remove it first, or save elsewhere)"},
		{filepath.Join(top, "no", "such", "s"), "--save " + filepath.Join(top, "no", "such", "s") + ": cannot write there: " + noSuch.Error()},
	} {
		sv, err := scan.OpenSaver(c.name, []string{data}, false)
		var oe *scan.OptionError
		if sv != nil || !errors.As(err, &oe) || oe.Option != "--save" || err.Error() != c.msg {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
	if b, _ := os.ReadFile(text); string(b) != "keep me\n" {
		t.Errorf("the refused file became %q", b)
	}
	// Through a symlink: the link's target is written, messages name the
	// link.
	if runtime.GOOS == "windows" {
		t.Skip("windows: symbolic links need a privilege there, and Wine 8's cannot be followed")
	}
	target := filepath.Join(top, "real")
	link := filepath.Join(top, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sv, err := scan.OpenSaver(link, []string{data}, false)
	if err != nil || sv.Name() != link || sv.Target() != target {
		t.Fatalf("OpenSaver(link): %v, %+v", err, sv)
	}
	res, err := scan.Run(context.Background(), model.Settings{}, []string{data}, scan.Options{Saver: sv})
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	if sc, err := saved.Read(target, saved.DecodeOptions{}); err != nil || !sc.Complete || sc.Counters.Files != 1 || sc.Table.Len() != 1 {
		t.Errorf("the scan saved through the link: %v, %+v", err, sc)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
}
