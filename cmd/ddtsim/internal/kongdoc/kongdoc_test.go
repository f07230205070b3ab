package kongdoc

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// A small grammar: one default command with every kind of flag and a
// positional, one with an enum argument.
type grammar struct {
	Run struct {
		Size  string   `placeholder:"SIZE" help:"A size. More text."`
		By    string   `placeholder:"dir|ext" help:"Group (e.g. dir). Rest."`
		Out   string   `placeholder:"FILE" help:"Output."`
		Mode  string   `default:"a" enum:"a,b" help:"Mode."`
		Cache bool     `negatable:"" help:"Cache."`
		Prop  []string `short:"o" sep:"none" help:".dot-led help, with a \\ backslash."`
		Paths []string `arg:"" optional:"" name:"path" help:"Paths."`
	} `cmd:"" default:"withargs" help:"Run it."`
	Shell struct {
		Shell string `arg:"" enum:"bash,zsh" help:"The shell."`
	} `cmd:"" help:"Shell."`
}

func model(t *testing.T) *kong.Application {
	t.Helper()
	var g grammar
	k, err := kong.New(&g, kong.Name("tool"), kong.Description("Does things."))
	if err != nil {
		t.Fatal(err)
	}
	return k.Model
}

// The model's flags become completion words with the right kinds of value.
func TestCompletionFromModel(t *testing.T) {
	var b strings.Builder
	if err := WriteCompletion(&b, model(t), "bash"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\t\tflags='--size --by --out --mode --cache --no-cache -o --prop -h --help'\n",
		"\t\t--size) vals=none ;;\n", "\t\t--by) vals='words:dir ext' ;;\n", "\t\t--out) vals=file ;;\n",
		"\t\t--mode) vals='words:a b' ;;\n", "\t\t-o|--prop) vals=none ;;\n",
		"\t\targ='words:bash zsh'\n", "*) cmd=run; break ;;",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("bash script lacks %q", want)
		}
	}
	if err := WriteCompletion(&b, model(t), "tcsh"); err == nil {
		t.Error("tcsh: no error")
	}
}

// roff: hyphens are \-, backslashes \e, a line starting with a period is
// guarded; the default and enum are said.
func TestManFromModel(t *testing.T) {
	var b strings.Builder
	if err := WriteMan(&b, model(t), Page{Section: 1, Name: "do-things"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		".TH TOOL 1 \"\" \"tool\" \"User Commands\"\n", ".SH NAME\ntool \\- do\\-things\n",
		".SH SYNOPSIS\n.B tool\n[<path> ...] [flags]\n",
		"\\fB\\-\\-mode\\fR=\\fIMODE\\fR\nMode. Accepted: a, b. Default: a.\n",
		"\\fB\\-\\-cache\\fR, \\fB\\-\\-no\\-cache\\fR\n",
		"\\fB\\-o\\fR, \\fB\\-\\-prop\\fR=\\fIPROP\\fR\n\\&.dot\\-led help, with a \\e backslash.\n",
		".SS \"tool shell <shell>\"\nShell.\n.TP\n.I shell\nThe shell.\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("man page lacks %q:\n%s", want, b.String())
		}
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"Add up scans (e.g. on hosts) and print. The rest.", 70, "Add up scans (e.g. on hosts) and print"},
		{"One sentence.", 70, "One sentence"},
		{"A very long help text that goes on and on beyond the limit", 27, "A very long help text..."},
	} {
		if got := summary(c.in, c.max); got != c.want {
			t.Errorf("summary(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}
