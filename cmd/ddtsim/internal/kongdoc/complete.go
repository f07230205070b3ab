package kongdoc

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// Shells are the shells WriteCompletion writes for.
var Shells = []string{"bash", "zsh", "fish"}

// WriteCompletion writes a completion script for shell (one of Shells)
// for app: its commands, each command's flags (the root's too), flag
// values (enums; files and directories where the placeholder names a FILE
// or DIR) and positional arguments (enums, command names, else files).
// Before a command word, app's default command (kong's default:"withargs")
// is assumed: its flags, files, and the command names are offered. The
// script is static: it does not run the program.
//
// Loading it: bash `source <(ddtsim completion bash)` (or the file in
// /etc/bash_completion.d/), zsh a file named _ddtsim in a directory of
// $fpath, fish a file ddtsim.fish in ~/.config/fish/completions/.
func WriteCompletion(w io.Writer, app *kong.Application, shell string) error {
	cmds := commands(app)
	var b strings.Builder
	switch shell {
	case "bash":
		writeBash(&b, app.Name, cmds)
	case "zsh":
		writeZsh(&b, app.Name, cmds)
	case "fish":
		writeFish(&b, app.Name, cmds)
	default:
		return fmt.Errorf("no completion for the shell %q (accepted: %s)", shell, strings.Join(Shells, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shellName makes s usable in a shell function's name.
func shellName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// subcommands are the commands below the root, with their flags and the
// root's together (kong takes a parent's flags after the command word).
func subcommands(cmds []command) (subs []command, dflt string) {
	for _, c := range cmds[1:] {
		if len(c.path) != 1 {
			continue // ddtsim has one level; deeper commands are not offered
		}
		c.flags = append(append([]flag(nil), c.flags...), cmds[0].flags...)
		subs = append(subs, c)
		if c.isDflt {
			dflt = c.path[0]
		}
	}
	return subs, dflt
}

func commandNames(subs []command) []string {
	var names []string
	for _, c := range subs {
		names = append(names, c.path[0])
	}
	return names
}

// bashQuote single-quotes s for bash, zsh and fish alike (fish needs \'
// and \\ inside single quotes; the others close the quote around \').
func bashQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeBash(b *strings.Builder, name string, cmds []command) {
	subs, dflt := subcommands(cmds)
	fn := "_" + shellName(name)
	pr := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	pr("# bash completion for %s, generated from its kong model by `%s completion bash`.\n", name, name)
	pr("# Load it with: source <(%s completion bash)\n\n", name)
	pr("%s() {\n", fn)
	pr("\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i w\n")
	pr("\t# --flag=VALUE: bash splits it at '=' (COMP_WORDBREAKS).\n")
	pr("\tif [[ $cur == = ]]; then\n\t\tcur=\n\telif [[ $prev == = ]] && ((COMP_CWORD > 1)); then\n\t\tprev=${COMP_WORDS[COMP_CWORD-2]}\n\tfi\n")
	pr("\t# The command: the first word that is not a flag (%s when it names none).\n", orDash(dflt))
	pr("\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tw=${COMP_WORDS[i]}\n\t\tcase $w in\n")
	pr("\t\t-*) ;;\n\t\t%s) cmd=$w; break ;;\n\t\t*) cmd=%s; break ;;\n\t\tesac\n\tdone\n", strings.Join(commandNames(subs), "|"), orNone(dflt))
	pr("\tlocal flags= vals= arg=file\n")
	pr("\tcase ${cmd:-%s} in\n", orNone(dflt))
	for _, c := range subs {
		pr("\t%s)\n", c.path[0])
		pr("\t\tflags=%s\n", bashQuote(strings.Join(flagWords(c.flags), " ")))
		pr("\t\tcase $prev in\n") // a flag's value
		for _, f := range c.flags {
			if !f.value {
				continue
			}
			forms := flagForms(f)
			if f.negation != "" {
				forms = forms[:len(forms)-1]
			}
			pr("\t\t%s) vals=%s ;;\n", strings.Join(forms, "|"), bashAction(f.kind, f.enum))
		}
		pr("\t\tesac\n")
		pr("\t\targ=%s\n", bashAction(argKind(c), argEnum(c, subs)))
		pr("\t\t;;\n")
	}
	pr("\tesac\n")
	pr("\tif [[ -n $vals ]]; then\n\t\t%s_offer \"$vals\"\n\t\treturn 0\n\tfi\n", fn)
	pr("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\t\treturn 0\n\tfi\n")
	pr("\tif [[ -z $cmd ]]; then\n\t\t%s_offer \"$arg\"\n\t\tlocal paths=(\"${COMPREPLY[@]}\")\n", fn)
	pr("\t\t%s_offer %s\n\t\tCOMPREPLY+=(\"${paths[@]}\")\n\t\treturn 0\n\tfi\n", fn, bashQuote("words:"+strings.Join(commandNames(subs), " ")))
	pr("\t%s_offer \"$arg\"\n}\n\n", fn)

	// _name_offer WHAT: file, dir, none or words:LIST into COMPREPLY.
	pr("%s_offer() {\n\tCOMPREPLY=()\n\tcase $1 in\n", fn)
	pr("\tfile) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n")
	pr("\tdir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n")
	pr("\twords:*) COMPREPLY=($(compgen -W \"${1#words:}\" -- \"$cur\")) ;;\n")
	pr("\tesac\n}\n\n")
	pr("complete -F %s %s\n", fn, name)
}

// orDash and orNone name the default command, or its absence.
func orDash(d string) string {
	if d == "" {
		return "none"
	}
	return d
}

func orNone(d string) string {
	if d == "" {
		return `""`
	}
	return d
}

// flagForms are a flag's words: -s, --long, --negation.
func flagForms(f flag) []string {
	var out []string
	if f.short != 0 {
		out = append(out, "-"+string(f.short))
	}
	out = append(out, "--"+f.long)
	if f.negation != "" {
		out = append(out, "--"+f.negation)
	}
	return out
}

func flagWords(fs []flag) []string {
	var out []string
	for _, f := range fs {
		out = append(out, flagForms(f)...)
	}
	return out
}

// bashAction is what bash offers for a value: file, dir, words:LIST or
// none.
func bashAction(k valueKind, enum []string) string {
	switch k {
	case kindFile:
		return "file"
	case kindDir:
		return "dir"
	case kindEnum, kindCommand:
		return bashQuote("words:" + strings.Join(enum, " "))
	}
	return "none"
}

// argKind is what a command's positional arguments are, taken from its
// first (kindNone when it has none).
func argKind(c command) valueKind {
	if len(c.args) == 0 {
		return kindNone
	}
	return c.args[0].kind
}

// argEnum is the words a command's first positional argument takes: its
// enum, or the command names.
func argEnum(c command, subs []command) []string {
	switch argKind(c) {
	case kindEnum:
		return c.args[0].enum
	case kindCommand:
		return commandNames(subs)
	}
	return nil
}

// zshDesc escapes a description for inside an _arguments spec's [...] or
// a _describe entry: brackets and colons are special there.
func zshDesc(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, `:`, `\:`)
	return r.Replace(s)
}

func writeZsh(b *strings.Builder, name string, cmds []command) {
	subs, dflt := subcommands(cmds)
	fn := "_" + shellName(name)
	pr := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	pr("#compdef %s\n", name)
	pr("# zsh completion for %s, generated from its kong model by `%s completion zsh`.\n", name, name)
	pr("# Install it as a file named %s in a directory of $fpath (before compinit runs).\n\n", fn)
	for _, c := range subs {
		pr("%s_%s() {\n\t_arguments -s -S \\\n", fn, shellName(c.path[0]))
		for _, f := range c.flags {
			for _, form := range flagForms(f) {
				spec := form
				if f.repeat {
					spec = "*" + spec
				}
				if f.value && form != "--"+f.negation {
					if form == "-"+string(f.short) {
						spec += "+"
					} else {
						spec += "="
					}
				}
				spec += "[" + zshDesc(summary(f.help, 70)) + "]"
				if f.value && form != "--"+f.negation {
					spec += ":" + zshDesc(f.holder) + ":" + zshAction(f.kind, f.enum)
				}
				pr("\t\t%s \\\n", bashQuote(spec))
			}
		}
		if len(c.args) > 0 {
			a := c.args[0]
			spec := ":" + zshDesc(a.name) + ":" + zshAction(a.kind, argEnum(c, subs))
			if a.repeat {
				spec = "*" + spec
			}
			pr("\t\t%s \\\n", bashQuote(spec))
		}
		pr("\t\t&& return 0\n}\n\n")
	}
	pr("%s() {\n\tlocal -a cmds\n\tcmds=(\n", fn)
	for _, c := range subs {
		pr("\t\t%s\n", bashQuote(c.path[0]+":"+zshDesc(summary(c.help, 70))))
	}
	pr("\t)\n")
	pr("\t# The command: the first word that is not a flag (%s when it names none).\n", orDash(dflt))
	pr("\tlocal i cmd=\n\tfor ((i = 2; i < CURRENT; i++)); do\n\t\tcase ${words[i]} in\n")
	pr("\t\t-*) ;;\n\t\t%s) cmd=${words[i]}; break ;;\n\t\t*) cmd=%s; i=1; break ;;\n\t\tesac\n\tdone\n", strings.Join(commandNames(subs), "|"), orNone(dflt))
	pr("\tif [[ -z $cmd ]]; then\n")
	if dflt != "" {
		pr("\t\tif [[ $PREFIX == -* ]] || (( CURRENT > 2 )); then\n\t\t\t%s_%s\n\t\t\treturn\n\t\tfi\n", fn, shellName(dflt))
		pr("\t\t_describe -t commands command cmds\n\t\t_files\n\t\treturn\n\tfi\n")
	} else {
		pr("\t\t_describe -t commands command cmds\n\t\treturn\n\tfi\n")
	}
	pr("\tif (( i > 1 )); then\n\t\t# Drop the words before the command's own.\n")
	pr("\t\twords=(\"$words[1] $cmd\" \"${(@)words[i+1,-1]}\")\n\t\t(( CURRENT -= i - 1 ))\n\tfi\n")
	pr("\tcase $cmd in\n")
	for _, c := range subs {
		pr("\t%s) %s_%s ;;\n", c.path[0], fn, shellName(c.path[0]))
	}
	pr("\tesac\n}\n\n")
	pr("if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n\t%s \"$@\"\nelse\n\tcompdef %s %s\nfi\n", fn, fn, name)
}

// zshAction is an _arguments action for a value.
func zshAction(k valueKind, enum []string) string {
	switch k {
	case kindFile:
		return "_files"
	case kindDir:
		return "_files -/"
	case kindEnum, kindCommand:
		return "(" + strings.Join(enum, " ") + ")"
	}
	return " "
}

// fishQuote single-quotes s for fish (\\ and \' inside).
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFish(b *strings.Builder, name string, cmds []command) {
	subs, dflt := subcommands(cmds)
	fn := "__" + shellName(name)
	pr := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	pr("# fish completion for %s, generated from its kong model by `%s completion fish`.\n", name, name)
	pr("# Install it as ~/.config/fish/completions/%s.fish\n\n", name)
	pr("# The command: the first word that is not a flag (%s when it names none).\n", orDash(dflt))
	pr("function %s_command\n\tfor w in (commandline -opc)[2..-1]\n\t\tswitch $w\n", fn)
	pr("\t\t\tcase '-*'\n\t\t\t\tcontinue\n")
	pr("\t\t\tcase %s\n\t\t\t\techo $w\n\t\t\t\treturn\n", strings.Join(commandNames(subs), " "))
	pr("\t\t\tcase '*'\n\t\t\t\techo %s\n\t\t\t\treturn\n\t\tend\n\tend\nend\n\n", orNone(dflt))
	pr("# %s_is CMD: the line's command is CMD (or, before a command word, CMD is the default).\n", fn)
	pr("function %s_is\n\tset -l c (%s_command)\n", fn, fn)
	if dflt != "" {
		pr("\ttest -z \"$c\"; and test $argv[1] = %s; and return 0\n", dflt)
	}
	pr("\ttest \"$c\" = $argv[1]\nend\n\n")
	pr("# %s_none: the line names no command yet.\nfunction %s_none\n\tset -l c (%s_command)\n\ttest -z \"$c\"\nend\n\n", fn, fn, fn)
	pr("complete -c %s -e\n", name)
	for _, c := range subs {
		pr("complete -c %s -n %s_none -a %s -d %s\n", name, fn, c.path[0], fishQuote(summary(c.help, 70)))
	}
	for _, c := range subs {
		cond := fishQuote(fn + "_is " + c.path[0])
		pr("\n# %s\n", c.path[0])
		if argKind(c) != kindFile {
			pr("complete -c %s -n %s -f\n", name, cond)
		}
		switch argKind(c) {
		case kindEnum, kindCommand:
			pr("complete -c %s -n %s -a %s\n", name, cond, fishQuote(strings.Join(argEnum(c, subs), " ")))
		}
		for _, f := range c.flags {
			pr("complete -c %s -n %s", name, cond)
			if f.short != 0 {
				pr(" -s %c", f.short)
			}
			pr(" -l %s", f.long)
			if f.value {
				switch f.kind {
				case kindFile:
					pr(" -r -F")
				case kindDir:
					pr(" -x -a '(__fish_complete_directories)'")
				case kindEnum:
					pr(" -x -a %s", fishQuote(strings.Join(f.enum, " ")))
				default:
					pr(" -x")
				}
			}
			pr(" -d %s\n", fishQuote(summary(f.help, 70)))
			if f.negation != "" {
				pr("complete -c %s -n %s -l %s -d %s\n", name, cond, f.negation, fishQuote("not --"+f.long))
			}
		}
	}
}
