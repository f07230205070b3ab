package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/ddtsim/ddtsim/internal/escape"
	"github.com/ddtsim/ddtsim/zdb"
)

// stdin is where "-" reads from (a variable for tests).
var stdin io.Reader = os.Stdin

type parseCmd struct {
	JSON bool   `name:"json" help:"Print everything as JSON: each number with the interval of values it stands for, line numbers, checks and diagnostics."`
	File string `arg:"" name:"file" help:"Text printed by zdb -S, zdb -D, -DD, -DDD or zpool status -D (any release; prompts, comments and several outputs in one file are fine). - reads standard input."`
}

// readText reads name ("-": standard input) and parses it. Its errors
// name the file: "FILE: binary data, not zdb or zpool output" for one that
// is not text (zdb.ErrBinary), "FILE: read: ..." when reading fails.
func readText(name string) (*zdb.Parsed, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err // *PathError: it names the file
		}
		defer f.Close()
		r = f
	}
	p, err := zdb.Parse(r)
	if err != nil {
		shown := escape.Path(name)
		if name == "-" {
			shown = "standard input"
		}
		if errors.Is(err, zdb.ErrBinary) {
			return nil, fmt.Errorf("%s: %w", shown, err)
		}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // "read FILE: ...": the file is named already
		}
		if errors.Is(err, syscall.EISDIR) {
			return nil, fmt.Errorf("%s: is a directory", shown)
		}
		return nil, fmt.Errorf("%s: read: %w", shown, err)
	}
	return p, nil
}

// run prints what the text says. Exit status: 0 read, 1 read but with
// unreadable rows or numbers or failed consistency checks, 2 nothing of a
// DDT in it (or the file cannot be read).
func (c *parseCmd) run(stdout, stderr io.Writer) int {
	p, err := readText(c.File)
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitCompareUnusable
	}
	name := c.File
	if name == "-" {
		name = "standard input"
	}
	if c.JSON {
		err = p.WriteJSON(stdout)
	} else {
		err = p.WriteText(stdout, name)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim: writing the report:", err)
		return exitFailed
	}
	switch {
	case !p.Usable():
		fmt.Fprintf(stderr, "ddtsim: %s: no DDT histogram, DDT line or dedup summary found\n", name)
		return exitCompareUnusable
	case p.Errors() > 0 || len(p.Failed()) > 0:
		fmt.Fprintf(stderr, "ddtsim: %s: %s, %s (see above)\n", name, plural(uint64(p.Errors()), "unreadable line"), plural(uint64(len(p.Failed())), "failed check"))
		return 1
	}
	return exitOK
}
