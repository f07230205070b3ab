package main

import (
	"errors"
	"fmt"
	"io"
	"os"

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
		return nil, fmt.Errorf("%s: read: %w", shown, err)
	}
	return p, nil
}

// run prints what the text says. Exit status: 0 read, 1 read but with
// unreadable rows or numbers or failed consistency checks, 2 nothing of a
// DDT in it (or the file cannot be read).
func (c *parseCmd) Run(std *streams) error {
	stdout := std.stdout
	p, err := readText(c.File)
	if err != nil {
		return statusError{exitCompareUnusable, err.Error()}
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
		return fmt.Errorf("writing the report: %w", err)
	}
	switch {
	case !p.Usable():
		return statusError{exitCompareUnusable, name + ": no DDT histogram, DDT line or dedup summary found"}
	case p.Errors() > 0 || len(p.Failed()) > 0:
		return statusError{1, fmt.Sprintf("%s: %d unreadable lines, %d failed checks (see above)", name, p.Errors(), len(p.Failed()))}
	}
	return nil
}
