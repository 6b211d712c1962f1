package cli

import (
	"context"
	"io"

	"github.com/robotsproxy/robotsproxy/internal/build"
	"github.com/robotsproxy/robotsproxy/internal/cli/command"
)

// run runs the command line args as Main does, with these streams, for a
// build given no VERSION and no -ldflags.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return newDispatcher(build.Info{}).run(ctx, args, command.Stdio{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// exitCode is the exit code Main returns for run's error.
func exitCode(err error, stderr io.Writer) int { return command.ExitCode(err, stderr) }
