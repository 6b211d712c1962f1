package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/cli/command"
)

// interruptGrace is how long a command other than serve has, after SIGINT
// or SIGTERM cancelled its context, to stop on its own (restore the
// terminal, remove a temporary file) before the process exits anyway.
const interruptGrace = 300 * time.Millisecond

// runWithSignals runs the command in args with d and returns the process
// exit code (command.ExitCode). SIGINT and SIGTERM cancel run's context. serve then shuts down
// gracefully and exits with its own code (0 after a clean shutdown); a
// second signal during the shutdown ends it at once. Every other command
// ends within interruptGrace, with 128 + the signal's number (130 for
// SIGINT, 143 for SIGTERM), as a shell reports a command a signal ended:
// its output may be incomplete.
func runWithSignals(d *dispatcher, args []string, stdio command.Stdio) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.run(ctx, args, stdio) }()
	var sig os.Signal
	select {
	case err := <-done:
		return command.ExitCode(err, stdio.Stderr)
	case sig = <-sigs:
	}
	cancel()
	cmd, _ := d.commandOf(args)
	var grace <-chan time.Time // serve: none; it drains within shutdown_timeout
	if cmd != "serve" {
		grace = time.After(interruptGrace)
	}
	select {
	case err := <-done:
		if cmd == "serve" {
			return command.ExitCode(err, stdio.Stderr)
		}
	case sig = <-sigs:
		fmt.Fprintf(stdio.Stderr, "robotsproxy: %s: %s again: not waiting for the shutdown\n", cmd, signalName(sig))
		return signalExitCode(sig)
	case <-grace:
	}
	fmt.Fprintf(stdio.Stderr, "robotsproxy: %s: interrupted by %s\n", cmd, signalName(sig))
	return signalExitCode(sig)
}

// signalExitCode is 128 + the signal's number: 130 for SIGINT, 143 for
// SIGTERM.
func signalExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// signalName names SIGINT and SIGTERM as a shell user knows them.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
