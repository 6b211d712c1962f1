// Package cli is robotsproxy's command line: it runs the command the
// arguments name, prints the help, maps a command's error to the exit
// code and ends a command on SIGINT and SIGTERM. The commands are values
// of package command, one a file, registered in commands.go; the help is
// drawn from them. Only package main imports this package.
package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/build"
	"github.com/robotsproxy/robotsproxy/internal/cli/command"
)

// Main runs the command line args (os.Args[1:]) with the process's
// standard streams and returns the exit code; b is what package main was
// given at build time.
func Main(args []string, b build.Info) int {
	return runWithSignals(newDispatcher(b), args, command.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
}

// dispatcher runs robotsproxy's commands.
type dispatcher struct {
	commands []command.Command // in the order the help lists them
}

func newDispatcher(b build.Info) *dispatcher {
	return &dispatcher{commands: commands(b)}
}

// run runs the command args name with the arguments that follow its name.
// A word that heads several commands ("audit") is a group: run then runs
// its subcommand.
func (d *dispatcher) run(ctx context.Context, args []string, stdio command.Stdio) error {
	word, rest := d.commandOf(args)
	switch word {
	case "help":
		fmt.Fprint(stdio.Stdout, d.help())
		return nil
	case "":
		return command.Exit(2, fmt.Errorf("unknown command %q\n%s", args[0], d.help()))
	}
	if c, ok := d.find(word); ok {
		return c.Run(ctx, rest, stdio)
	}
	return d.runGroup(ctx, word, rest, stdio)
}

// commandOf splits args into the first word of the command and what
// follows it: "help" for none, -h, --help and help; "version" for
// -version; "serve" when the first argument is another flag; "" for a
// word that names no command.
func (d *dispatcher) commandOf(args []string) (word string, rest []string) {
	if len(args) == 0 || isHelp(args[0]) {
		return "help", nil
	}
	switch a := args[0]; {
	case a == "-version" || a == "--version":
		return "version", args[1:]
	case slices.ContainsFunc(d.commands, func(c command.Command) bool { return firstWord(c.Name) == a }):
		return a, args[1:]
	case strings.HasPrefix(a, "-"):
		return "serve", args // flags without a command are serve's
	}
	return "", args
}

// runGroup runs the subcommand of group that args name: "audit report
// LOG" is the command "audit report" with the argument LOG.
func (d *dispatcher) runGroup(ctx context.Context, group string, args []string, stdio command.Stdio) error {
	help := d.groupHelp(group)
	want, ok := wants[group]
	if !ok {
		want = "a subcommand (" + strings.Join(d.subcommands(group), ", ") + ")"
	}
	switch {
	case len(args) > 0 && isHelp(args[0]):
		fmt.Fprint(stdio.Stdout, help)
		return nil
	case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
		if c, ok := d.find(group + " " + args[0]); ok {
			return c.Run(ctx, args[1:], stdio)
		}
		return command.Exit(2, fmt.Errorf("%s: unknown subcommand %q: want %s\n%s", group, args[0], want, help))
	}
	return command.Exit(2, fmt.Errorf("%s: want %s\n%s", group, want, help))
}

// find returns the command called name.
func (d *dispatcher) find(name string) (command.Command, bool) {
	i := slices.IndexFunc(d.commands, func(c command.Command) bool { return c.Name == name })
	if i < 0 {
		return command.Command{}, false
	}
	return d.commands[i], true
}

// subcommands returns the second words of group's commands, in order.
func (d *dispatcher) subcommands(group string) []string {
	var out []string
	for _, c := range d.commands {
		if sub, ok := strings.CutPrefix(c.Name, group+" "); ok {
			out = append(out, sub)
		}
	}
	return out
}

// firstWord is a command name's first word: its group, or the name.
func firstWord(name string) string {
	w, _, _ := strings.Cut(name, " ")
	return w
}

// isHelp reports whether arg asks for help where a command or a
// subcommand is expected ("-h", "audit --help").
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}
