package main

import (
	"fmt"

	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zdb"
)

type parseCmd struct {
	env  *env   // the process's (env.go); nil: main's
	JSON bool   `name:"json" help:"Print everything as JSON: each number with the interval of values it stands for, line numbers, checks and diagnostics."`
	File string `arg:"" name:"file" help:"Text printed by zdb -S, zdb -D, -DD, -DDD or zpool status -D (any release; prompts, comments and several outputs in one file are fine). - reads standard input."`
}

// readText reads name ("-": e's standard input) and parses it
// (zdb.ReadFile).
func readText(e *env, name string) (*zdb.Parsed, error) { return zdb.ReadFile(name, e.input()) }

// run prints what the text says. Exit status: 0 read, 1 read but with
// unreadable rows or numbers or failed consistency checks, 2 nothing of a
// DDT in it (or the file cannot be read).
func (c *parseCmd) Run(std *streams) error {
	stdout := std.stdout
	p, err := readText(c.env, c.File)
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
		return statusError{1, fmt.Sprintf("%s: %s, %s (see above)", name, english.Count(uint64(p.Errors()), "unreadable line"), english.Count(uint64(len(p.Failed())), "failed check"))}
	}
	return nil
}
