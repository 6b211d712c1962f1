// Package command holds robotsproxy's commands, one a file, each a
// Command value of one shape: a name, a one-line summary, a usage and
// Run. The dispatcher (package cli, above this one) lists them in its
// help and runs the one the command line names; nothing here calls back
// into it. Beside the commands, in files of their own, are what several
// of them share: the flag rule (flags.go), exit codes (exit.go), the
// configuration file (config.go), whole-or-nothing output (output.go) and
// the audit chain's anchors (anchors.go).
//
// A new command is a file here declaring its Command value (Check is the
// model: a name, a summary, a usage that names every flag, and a run
// function that parses its flag set first), and one line in the
// dispatcher's registry (internal/cli/commands.go).
package command

import (
	"context"
	"flag"
	"io"
	"strings"
)

// Stdio is a command's standard streams: the process's, or a test's
// buffers.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Command is one command of robotsproxy.
type Command struct {
	// Name is what follows "robotsproxy" on the command line: one word
	// ("serve"), or a group and a subcommand ("audit report").
	Name string
	// Summary is what the command does, in one line for the command
	// list: lower case, no full stop.
	Summary string
	// Usage is the synopsis after "robotsproxy ": the name, the flags and
	// the arguments, as the command list and the command's -h print it.
	Usage string
	// run does the work; it is handed the Command itself, for its flag
	// set (flagSet, parse) and its usage errors (usage).
	run func(ctx context.Context, cmd Command, args []string, stdio Stdio) error
	// collect, when set, receives the flag set instead of parsing the
	// arguments with it (FlagsOf).
	collect func(*flag.FlagSet)
}

// Run runs the command with args, the arguments after its name. A
// cancelled ctx (SIGINT, SIGTERM) ends it. The error carries the exit
// code (ExitCode): nil is 0.
func (c Command) Run(ctx context.Context, args []string, stdio Stdio) error {
	return c.run(ctx, c, args, stdio)
}

// FlagsOf returns the flag set c defines, with every flag's name,
// placeholder, default and usage, without running c: the reference of
// docs/cli.md is drawn from it. It is nil for a command that does not
// parse its arguments with a flag set before anything else.
func FlagsOf(c Command) *flag.FlagSet {
	var fs *flag.FlagSet
	c.collect = func(f *flag.FlagSet) { fs = f }
	c.Run(context.Background(), nil, Stdio{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
	return fs
}
