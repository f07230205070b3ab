package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/alecthomas/kong"
)

var update = flag.Bool("update", false, "TestUsageDoc: rewrite docs/usage.md's generated part")

// usageDocPath is the usage page, relative to the repository's root.
const usageDocPath = "docs/usage.md"

// usageMark starts the part of docs/usage.md generated from --help; the
// text above it is written by hand.
const usageMark = "<!-- Generated below from the command's --help; regenerate: go test ./cmd/ddtsim -run TestUsageDoc -update -->\n"

// helpCommands returns the names of the visible commands, in the order
// ddtsim --help lists them.
func helpCommands(t *testing.T) []string {
	t.Helper()
	parser, err := kong.New(&cli{}, kong.Name("ddtsim"), cliVars(), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range parser.Model.Children {
		if n.Type == kong.CommandNode && !n.Hidden {
			names = append(names, n.Name)
		}
	}
	return names
}

// usageDoc is the generated part of docs/usage.md: ddtsim --help, then each
// command's --help, as the command prints them into a file or a pipe
// (80 columns).
func usageDoc(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, name := range append([]string{""}, helpCommands(t)...) {
		args := []string{"--help"}
		title := "ddtsim --help"
		if name != "" {
			args = []string{name, "--help"}
			title = "ddtsim " + name + " --help"
		}
		code, out, errs := runT(args...)
		if code != 0 || errs != "" {
			t.Fatalf("%s: exit %d: %s", title, code, errs)
		}
		fmt.Fprintf(&b, "\n## %s\n\n```text\n%s```\n", title, out)
	}
	return b.String()
}

// TestUsageDoc keeps docs/usage.md's copy of --help current; with -update
// it rewrites that part (the text above usageMark is kept).
func TestUsageDoc(t *testing.T) {
	path := filepath.Join(repoRoot, usageDocPath)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, old, ok := strings.Cut(string(text), usageMark)
	if !ok {
		t.Fatalf("%s has no line %q", usageDocPath, strings.TrimSpace(usageMark))
	}
	want := usageDoc(t)
	if *update {
		if err := os.WriteFile(path, []byte(head+usageMark+want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if old != want {
		t.Errorf("%s is not the command's --help; regenerate it: go test ./cmd/ddtsim -run TestUsageDoc -update", usageDocPath)
	}
}

// docFiles returns README.md and the Markdown files under docs/, relative
// to the repository's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(repoRoot, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// mdLine is a line of a Markdown file outside fenced code blocks, or
// inside one (code).
type mdLine struct {
	n    int // line number, from 1
	text string
	code bool
}

// mdLines splits a Markdown text into lines, marking those inside fenced
// code blocks (the fences themselves too).
func mdLines(text string) []mdLine {
	var out []mdLine
	fenced := false
	for i, l := range strings.Split(text, "\n") {
		fence := strings.HasPrefix(strings.TrimSpace(l), "```")
		out = append(out, mdLine{i + 1, l, fenced || fence})
		if fence {
			fenced = !fenced
		}
	}
	return out
}

// anchors returns the anchors GitHub makes of a Markdown text's headings:
// lower case, letters, digits, '-' and '_' kept, spaces made '-', the rest
// dropped; a repeated one gets -1, -2, ...
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range mdLines(text) {
		if l.code || !strings.HasPrefix(l.text, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l.text, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// linkRE matches a Markdown link or image: [text](target).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks checks that every relative link in README.md and docs/
// leads to a file of the repository, and a #fragment to a heading of the
// Markdown file it names.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	for _, file := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range mdLines(string(text)) {
			if l.code {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(l.text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				p, frag, _ := strings.Cut(target, "#")
				dest := file
				if p != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), p))
					if _, err := os.Stat(filepath.Join(repoRoot, dest)); err != nil {
						t.Errorf("%s:%d: link %s: %v", file, l.n, target, err)
						continue
					}
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %s: a #fragment of a file that is not Markdown", file, l.n, target)
					continue
				}
				destText, err := os.ReadFile(filepath.Join(repoRoot, dest))
				if err != nil {
					t.Errorf("%s:%d: link %s: %v", file, l.n, target, err)
					continue
				}
				if !anchors(string(destText))[frag] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", file, l.n, target, dest, frag)
				}
			}
		}
	}
}

// TestDocCommandPaths checks the commands shown in code blocks of README.md
// and docs/ against the tree: the package directories a go command names
// (./pkg/, ./pkg/...) and the scripts run (scripts/x.sh) exist.
func TestDocCommandPaths(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, file := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range mdLines(string(text)) {
			if !l.code {
				continue
			}
			fields := strings.Fields(l.text)
			// Environment assignments before the command (CGO_ENABLED=0 go ...).
			for len(fields) > 0 && strings.Contains(fields[0], "=") && !strings.HasPrefix(fields[0], "-") {
				fields = fields[1:]
			}
			if len(fields) == 0 {
				continue
			}
			var paths []string
			switch {
			case fields[0] == "go":
				for _, f := range fields[1:] {
					if f == "#" {
						break
					}
					if strings.HasPrefix(f, "./") {
						paths = append(paths, strings.TrimSuffix(strings.TrimSuffix(f, "..."), "/"))
					}
				}
			case strings.HasPrefix(fields[0], "scripts/"):
				paths = append(paths, fields[0])
			}
			for _, p := range paths {
				checked++
				if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
					t.Errorf("%s:%d: %s: %v", file, l.n, p, err)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no go command or script found in the docs' code blocks")
	}
}

// TestAnchors checks the anchor rule on headings of the kinds the docs use.
func TestAnchors(t *testing.T) {
	t.Parallel()
	got := anchors("# A\n## The dedup table's size, and RAM\n```\n# not a heading\n```\n## ddtsim --help\n## `--guest`: VM images\n## A\n")
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"--guest-vm-images", "a", "a-1", "ddtsim---help", "the-dedup-tables-size-and-ram"}
	if !slices.Equal(keys, want) {
		t.Errorf("anchors = %q, want %q", keys, want)
	}
}
