// Package kongdoc writes a command line's documentation from its kong
// model (*kong.Application, after kong.New): a man page in roff (man(7)
// macros), and completion scripts for bash, zsh and fish. Everything comes
// from the model — commands, flags, their short forms, placeholders,
// defaults, enums, negations and positional arguments — so the page and
// the scripts follow the flags as they change; hidden commands and flags
// are left out. The output depends on the model only (no date, no
// version), so a page checked into the repository can be compared with a
// fresh one.
package kongdoc

import (
	"strings"

	"github.com/alecthomas/kong"
)

// valueKind is what a flag's value or a positional argument names, for
// completion.
type valueKind int

const (
	kindNone    valueKind = iota // a free value (a size, a number): nothing to offer
	kindFile                     // a file (or any path)
	kindDir                      // a directory
	kindEnum                     // one of the enum's values
	kindCommand                  // a command name (help's argument)
)

// flag is one flag of a command, as the generators use it.
type flag struct {
	long     string // without "--"
	short    rune   // 0: none
	negation string // the negated form without "--" ("no-cache"); "" if not negatable
	value    bool   // takes a value
	repeat   bool   // may be given several times (a slice)
	holder   string // the value's placeholder (NAME=VALUE, FILE)
	kind     valueKind
	enum     []string // kindEnum's values
	help     string
	def      string // default value, "" if none worth saying
}

// positional is a command's positional argument.
type positional struct {
	name   string
	repeat bool
	kind   valueKind
	enum   []string
	help   string
}

// command is a (sub)command of the application, or the application
// itself (path empty).
type command struct {
	path   []string // command words from the root: ["scan"]
	help   string
	detail string
	flags  []flag       // its own flags (a command also takes the root's)
	args   []positional // its positional arguments, in order
	usage  string       // kong's summary line without the program name
	isDflt bool         // the default command (runs without its name)
}

// commands lists app's commands depth first, the root first.
func commands(app *kong.Application) []command {
	var out []command
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		c := command{path: path, help: n.Help, detail: n.Detail, usage: n.Summary()}
		if n.Parent != nil && n.Parent.DefaultCmd == n {
			c.isDflt = true
		}
		for _, f := range n.Flags {
			if !f.Hidden {
				c.flags = append(c.flags, flagOf(f))
			}
		}
		for _, p := range n.Positional {
			c.args = append(c.args, positionalOf(p))
		}
		out = append(out, c)
		for _, ch := range n.Children {
			if ch.Hidden || ch.Type != kong.CommandNode {
				continue
			}
			walk(ch, append(append([]string(nil), path...), ch.Name))
		}
	}
	walk(app.Node, nil) // the root's flags include kong's --help
	return out
}

func flagOf(f *kong.Flag) flag {
	fl := flag{long: f.Name, short: f.Short, help: f.Help, repeat: f.IsSlice() || f.IsCumulative() && !f.IsBool()}
	switch f.Tag.Negatable {
	case "":
	case "_":
		fl.negation = "no-" + f.Name
	default:
		fl.negation = f.Tag.Negatable
	}
	if !f.IsBool() && !f.IsCounter() {
		fl.value = true
		fl.holder = f.PlaceHolder
		if fl.holder == "" { // kong would show the default, quoted
			fl.holder = strings.ToUpper(f.Name)
		}
		fl.kind = kindOf(f.Value, fl.holder)
		switch {
		case fl.kind == kindEnum:
			fl.enum = f.EnumSlice()
		case isChoice(fl.holder):
			fl.kind, fl.enum = kindEnum, strings.Split(fl.holder, "|")
		}
		if f.HasDefault && f.Default != "" {
			fl.def = f.Default
		}
	}
	return fl
}

func positionalOf(p *kong.Positional) positional {
	a := positional{name: p.Name, repeat: p.IsSlice() || p.IsCumulative(), help: p.Help}
	a.kind = kindOf(p, strings.ToUpper(p.Name))
	switch {
	case a.kind == kindEnum:
		a.enum = p.EnumSlice()
	case p.Name == "command":
		a.kind = kindCommand
	case a.kind == kindNone:
		a.kind = kindFile // paths, saved scans, zdb output files
	}
	return a
}

// kindOf tells a value's kind from its enum or its placeholder's words.
func kindOf(v *kong.Value, holder string) valueKind {
	switch {
	case v.Enum != "":
		return kindEnum
	case strings.Contains(holder, "DIR"):
		return kindDir
	case strings.Contains(holder, "FILE"), strings.Contains(holder, "PATH"), holder == "SCAN":
		return kindFile
	}
	return kindNone
}

// isChoice tells a placeholder listing the values a flag takes, such as
// "dir|ext|size|file" (kong checks no enum there: the command does).
func isChoice(holder string) bool {
	return strings.Contains(holder, "|") && strings.Trim(holder, "abcdefghijklmnopqrstuvwxyz0123456789-|") == ""
}

// summary is the first sentence of help, at most max bytes (cut at a
// word, with "..."), without its final period: a completion's description.
func summary(help string, max int) string {
	s := strings.Join(strings.Fields(help), " ")
	for i := 0; ; {
		j := strings.Index(s[i:], ". ")
		if j < 0 {
			break
		}
		if end := s[:i+j]; !strings.HasSuffix(end, "e.g") && !strings.HasSuffix(end, "i.e") {
			s = end
			break
		}
		i += j + 2
	}
	s = strings.TrimSuffix(s, ".")
	if len(s) > max {
		cut := strings.LastIndexByte(s[:max-3], ' ')
		if cut <= 0 {
			cut = max - 3
		}
		s = strings.TrimRight(s[:cut], " ,;:(") + "..."
	}
	return s
}
