package kongdoc

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// Section is a man page section beyond those the model gives (EXIT
// STATUS, SEE ALSO): a title in capitals and paragraphs of plain text
// (escaped for roff by WriteMan).
type Section struct {
	Title      string
	Paragraphs []string
}

// Page is what a man page says beyond the model: its section number (1
// for a command), the one-line description of NAME, and sections after
// the commands.
type Page struct {
	Section int
	Name    string // NAME's description, e.g. "predict ZFS dedup and compression savings"
	Extra   []Section
}

// WriteMan writes app's man page in roff with the man(7) macros: NAME,
// SYNOPSIS, DESCRIPTION (the application's help), OPTIONS (the root's
// flags), COMMANDS (each command's usage, help and flags, with defaults
// and accepted values), then p.Extra. View it with man -l FILE.
func WriteMan(w io.Writer, app *kong.Application, p Page) error {
	cmds := commands(app)
	name := app.Name
	var b strings.Builder
	pr := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	pr(".\\\" Generated from the command line's kong model: do not edit.\n")
	pr(".TH %s %d \"\" \"%s\" \"User Commands\"\n", strings.ToUpper(name), p.Section, name)
	pr(".SH NAME\n%s \\- %s\n", name, roffText(p.Name))
	pr(".SH SYNOPSIS\n")
	for _, c := range cmds[1:] {
		if c.isDflt {
			pr(".B %s\n%s\n.br\n", name, roffText(usageTail(c, false)))
		}
	}
	pr(".B %s\n%s\n", name, roffText("<command> [flags] [arguments]"))
	pr(".SH DESCRIPTION\n%s\n", roffParagraphs(app.Help))
	if app.Detail != "" {
		pr(".PP\n%s\n", roffParagraphs(app.Detail))
	}
	if len(cmds[0].flags) > 0 {
		pr(".SH OPTIONS\nThese are taken by every command.\n")
		for _, f := range cmds[0].flags {
			writeFlag(&b, f)
		}
	}
	pr(".SH COMMANDS\n")
	for _, c := range cmds[1:] {
		pr(".SS \"%s %s\"\n", name, roffQuoted(usageTail(c, true)))
		pr("%s\n", roffParagraphs(c.help))
		if c.detail != "" {
			pr(".PP\n%s\n", roffParagraphs(c.detail))
		}
		for _, a := range c.args {
			if a.help == "" {
				continue
			}
			pr(".TP\n.I %s\n%s\n", roffText(a.name), roffParagraphs(a.help))
		}
		for _, f := range c.flags {
			writeFlag(&b, f)
		}
	}
	for _, s := range p.Extra {
		pr(".SH %s\n", roffQuoted(strings.ToUpper(s.Title)))
		for i, para := range s.Paragraphs {
			if i > 0 {
				pr(".PP\n")
			}
			pr("%s\n", roffParagraphs(para))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// usageTail is a command's usage line after the program's name: with its
// words (withName), or as the default command runs without them.
func usageTail(c command, withName bool) string {
	s := c.usage
	if !withName {
		s = strings.TrimPrefix(s, strings.Join(c.path, " "))
		s = strings.TrimSpace(s)
	}
	return s
}

// writeFlag writes one flag as a tagged paragraph: its forms in bold, the
// placeholder in italics, then its help, accepted values and default.
func writeFlag(b *strings.Builder, f flag) {
	var forms []string
	if f.short != 0 {
		forms = append(forms, `\fB\-`+roffText(string(f.short))+`\fR`)
	}
	long := `\fB\-\-` + roffText(f.long) + `\fR`
	if f.value {
		long += `=\fI` + roffText(f.holder) + `\fR`
	}
	forms = append(forms, long)
	if f.negation != "" {
		forms = append(forms, `\fB\-\-`+roffText(f.negation)+`\fR`)
	}
	fmt.Fprintf(b, ".TP\n%s\n", strings.Join(forms, ", "))
	text := f.help
	if len(f.enum) > 0 && !strings.Contains(text, strings.Join(f.enum, ",")) {
		text += " Accepted: " + strings.Join(f.enum, ", ") + "."
	}
	if f.def != "" {
		text += " Default: " + f.def + "."
	}
	fmt.Fprintf(b, "%s\n", roffParagraphs(strings.TrimSpace(text)))
}

// roffParagraphs escapes text for roff, its blank lines becoming
// paragraph breaks and its other line breaks spaces.
func roffParagraphs(text string) string {
	paras := strings.Split(strings.TrimSpace(text), "\n\n")
	for i, p := range paras {
		paras[i] = roffText(strings.Join(strings.Fields(p), " "))
	}
	return strings.Join(paras, "\n.PP\n")
}

// roffText escapes one line of text for roff: backslashes, hyphens (a
// minus in roff is \-, which man pages use for options so that they can
// be copied), and a leading period or apostrophe (a request otherwise).
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffQuoted is roffText inside a macro's double-quoted argument, where a
// double quote is written "".
func roffQuoted(s string) string {
	return strings.ReplaceAll(roffText(s), `"`, `""`)
}
