package command

import (
	"context"
	"fmt"

	"github.com/robotsproxy/robotsproxy/internal/build"
)

// Version is "robotsproxy version" (also -version): the version, the
// commit and the Go version of b, the build (build.Info.Resolve).
func Version(b build.Info) Command {
	return Command{
		Name:    "version",
		Summary: "print the version, the commit and the Go version",
		Usage:   "version",
		run: func(_ context.Context, cmd Command, args []string, stdio Stdio) error {
			fs := cmd.flagSet("Print the version, the commit and the Go version the binary was built with.", stdio.Stderr)
			if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
				return err
			}
			if err := noArguments(fs); err != nil {
				return err
			}
			ver, rev, goVersion := b.Resolve()
			fmt.Fprintf(stdio.Stdout, "robotsproxy %s\ncommit %s\ngo %s\n", ver, rev, goVersion)
			return nil
		},
	}
}
