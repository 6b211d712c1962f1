package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/robotsproxy/robotsproxy/internal/cli/command"
)

// help is what "robotsproxy", "robotsproxy -h" and "robotsproxy help"
// print: every command with its summary, the exit codes, then every
// command's usage, drawn from the registered commands.
func (d *dispatcher) help() string {
	var b strings.Builder
	b.WriteString("robotsproxy: a forward HTTP(S) proxy that makes crawlers obey robots.txt (RFC 9309)\n\ncommands:\n")
	writeSummaries(&b, d.commands, "", command.Command{Name: "help", Summary: "print this help"})
	b.WriteString(`
"robotsproxy COMMAND -h" prints a command's flags.
Exit codes: 0 success; 1 check: a URL is disallowed, audit verify: a line does
not verify, healthcheck: not ready, serve: a runtime failure; 2 usage,
configuration or I/O error; 130, 143: ended by SIGINT, SIGTERM.

usage:
`)
	writeUsages(&b, d.commands)
	b.WriteString("\nFlags may come before, between or after the arguments; \"--\" ends them.\n")
	return b.String()
}

// groupHelp is what "robotsproxy GROUP -h" prints: the group's commands
// with their summaries, then their usages.
func (d *dispatcher) groupHelp(group string) string {
	var cmds []command.Command
	for _, c := range d.commands {
		if firstWord(c.Name) == group {
			cmds = append(cmds, c)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "usage: robotsproxy %s SUBCOMMAND [flags] [arguments]\n\nsubcommands:\n", group)
	writeSummaries(&b, cmds, group+" ")
	b.WriteString("\n")
	writeUsages(&b, cmds)
	fmt.Fprintf(&b, "\n\"robotsproxy %s SUBCOMMAND -h\" prints a subcommand's flags.\n", group)
	return b.String()
}

// writeSummaries writes a line a command, its name (without prefix) and
// its summary in aligned columns.
func writeSummaries(w io.Writer, cmds []command.Command, prefix string, more ...command.Command) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range append(cmds, more...) {
		fmt.Fprintf(tw, "  %s\t%s\n", strings.TrimPrefix(c.Name, prefix), c.Summary)
	}
	tw.Flush()
}

// writeUsages writes a line a command: "robotsproxy " and its usage.
func writeUsages(w io.Writer, cmds []command.Command) {
	for _, c := range cmds {
		fmt.Fprintf(w, "  robotsproxy %s\n", c.Usage)
	}
}
