package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/build"
	"github.com/robotsproxy/robotsproxy/internal/cli/command"
)

// cliPage is the command-line reference.
var cliPage = filepath.Join("..", "..", "docs", "cli.md")

// The flag tables of cliPage stand between these lines.
const (
	flagsBegin = "<!-- flags: drawn from the flag definitions by TestCLIReference (internal/cli); ROBOTSPROXY_UPDATE_DOCS=1 go test -run TestCLIReference ./internal/cli redraws them -->"
	flagsEnd   = "<!-- flags: end -->"
)

// TestCLIReference keeps docs/cli.md equal to the commands: its Commands
// block gives each registered command's usage (and no other command), and
// its flag tables are flagTables, drawn from each command's flag set. With
// ROBOTSPROXY_UPDATE_DOCS=1 it writes the usages and the flag tables
// instead.
func TestCLIReference(t *testing.T) {
	raw, err := os.ReadFile(cliPage)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	cmds := newDispatcher(build.Info{}).commands
	update := os.Getenv("ROBOTSPROXY_UPDATE_DOCS") == "1"
	text, problems := commandsBlock(text, cmds)
	before, rest, ok1 := strings.Cut(text, flagsBegin+"\n")
	_, after, ok2 := strings.Cut(rest, flagsEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s: no flag tables between %q and %q", cliPage, flagsBegin, flagsEnd)
	}
	if tables := flagTables(cmds); tables != rest[:len(rest)-len(after)-len(flagsEnd)] {
		problems = append(problems, "the flag tables are not the commands' flags")
		text = before + flagsBegin + "\n" + tables + flagsEnd + after
	}
	switch {
	case len(problems) == 0:
	case update:
		if err := os.WriteFile(cliPage, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: redrew %s", cliPage, strings.Join(problems, "; "))
	default:
		t.Errorf("%s: %s: ROBOTSPROXY_UPDATE_DOCS=1 go test -run TestCLIReference ./internal/cli redraws them", cliPage, strings.Join(problems, "; "))
	}
}

// commandsBlock checks the first ``` block after "## Commands" of text:
// each command has an entry, a line "robotsproxy NAME ..." with the
// indented lines that continue it up to a "#" comment, whose words are
// "robotsproxy " and its usage. It returns text with each entry that
// differs, or is missing, written anew (wrapped at usageWidth), and what
// differed.
func commandsBlock(text string, cmds []command.Command) (string, []string) {
	head, rest, _ := strings.Cut(text, "\n## Commands\n")
	intro, rest, _ := strings.Cut(rest, "```\n")
	block, tail, _ := strings.Cut(rest, "```")
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	var problems []string
	found := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "robotsproxy ") {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.HasPrefix(lines[j], " ") && !strings.HasPrefix(strings.TrimSpace(lines[j]), "#") {
			j++
		}
		code, comment, _ := strings.Cut(strings.Join(lines[i:j], " "), "#")
		got := strings.Join(strings.Fields(code), " ")
		c, ok := commandOfUsage(cmds, got)
		if !ok {
			problems = append(problems, fmt.Sprintf("the Commands block gives %q, which is no command", got))
			continue
		}
		found[c.Name] = true
		if want := "robotsproxy " + c.Usage; got != want {
			problems = append(problems, fmt.Sprintf("the Commands block gives %q for %s, its usage is %q", got, c.Name, want))
			entry := wrapUsage(want)
			if comment != "" && j == i+1 {
				entry[len(entry)-1] += "  #" + comment
			}
			lines = append(lines[:i], append(entry, lines[j:]...)...)
			j = i + len(entry)
		}
		i = j - 1
	}
	for _, c := range cmds {
		if !found[c.Name] {
			problems = append(problems, "the Commands block has no entry for "+c.Name)
			lines = append(lines, wrapUsage("robotsproxy "+c.Usage)...)
		}
	}
	return head + "\n## Commands\n" + intro + "```\n" + strings.Join(lines, "\n") + "\n```" + tail, problems
}

// commandOfUsage returns the command whose name an entry's words start
// with: the longest such name, so that "audit report" wins over "audit".
func commandOfUsage(cmds []command.Command, words string) (command.Command, bool) {
	var best command.Command
	for _, c := range cmds {
		if (words == "robotsproxy "+c.Name || strings.HasPrefix(words, "robotsproxy "+c.Name+" ")) && len(c.Name) > len(best.Name) {
			best = c
		}
	}
	return best, best.Name != ""
}

// usageWidth is where the Commands block wraps a usage.
const usageWidth = 104

// wrapUsage wraps a usage ("robotsproxy NAME [flags] ARGS") at
// usageWidth, between bracketed groups, its later lines indented under
// the first flag.
func wrapUsage(usage string) []string {
	var words []string
	depth := 0
	for _, w := range strings.Fields(usage) {
		if depth > 0 {
			words[len(words)-1] += " " + w
		} else {
			words = append(words, w)
		}
		depth += strings.Count(w, "[") - strings.Count(w, "]")
	}
	n := 2 // "robotsproxy NAME"
	if len(words) > 2 && !strings.HasPrefix(words[2], "[") && !strings.HasPrefix(words[2], "-") && strings.ToLower(words[2]) == words[2] {
		n = 3 // "robotsproxy GROUP SUBCOMMAND"
	}
	indent := strings.Repeat(" ", len(strings.Join(words[:min(n, len(words))], " "))+1)
	lines := []string{strings.Join(words[:min(n, len(words))], " ")}
	for _, w := range words[min(n, len(words)):] {
		if last := lines[len(lines)-1]; len(last)+1+len(w) > usageWidth && strings.TrimSpace(last) != "" && len(lines[len(lines)-1]) > len(indent) {
			lines = append(lines, indent+w)
		} else {
			lines[len(lines)-1] = last + " " + w
		}
	}
	return lines
}

// flagTables draws a table of each command's flags: the flag with its
// placeholder, its default (left out when it is the zero value, as -h
// does) and its meaning, as the command's -h prints them.
func flagTables(cmds []command.Command) string {
	var b strings.Builder
	for _, c := range cmds {
		fs := command.FlagsOf(c)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### `%s`\n\n| flag | default | meaning |\n| --- | --- | --- |\n", c.Name)
		fs.VisitAll(func(f *flag.Flag) {
			placeholder, usage := flag.UnquoteUsage(f)
			name := "-" + f.Name
			if placeholder != "" {
				name += " " + placeholder
			}
			def := ""
			if !isZeroDefault(f) {
				def = "`" + f.DefValue + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, def, strings.ReplaceAll(usage, "|", `\|`))
		})
	}
	return b.String() + "\n"
}

// isZeroDefault reports whether f's default is its type's zero value, which
// -h leaves out.
func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]":
		return true
	}
	return false
}
