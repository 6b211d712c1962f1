package command

import (
	"errors"
	"fmt"
	"io"
)

// exitError is an error that ends the process with code, the exit codes
// of docs/cli.md: 0 success (help printed on -h), 1 a negative result
// (check: a URL is disallowed; audit verify: a line does not verify;
// healthcheck: not ready) or serve's runtime failure, 2 a usage,
// configuration or I/O error. An error without a code exits 1; the
// dispatcher (package cli) maps errors to codes with ExitCode, and adds
// 130 and 143 for SIGINT and SIGTERM.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode maps the error a command returned to the process's exit code,
// printing its message on stderr ("robotsproxy: ..."): nil is 0, an error
// of Exit its code (with no message when its text is empty), any other 1.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err.Error() != "" {
			fmt.Fprintln(stderr, "robotsproxy:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "robotsproxy:", err)
	return 1
}

// Exit returns err as an error that ends the process with code; an err
// whose text is empty prints nothing.
func Exit(code int, err error) error { return &exitError{code, err} }

// usageErr is a usage error (exit 2) with the message of fmt.Errorf.
func usageErr(format string, args ...any) error {
	return &exitError{2, fmt.Errorf(format, args...)}
}

// errHelp ends a command that printed its help because of -h: exit 0.
var errHelp = &exitError{0, errors.New("")}

// usage is c's synopsis as its usage errors end: "usage: robotsproxy "
// and c.Usage.
func (c Command) usage() string { return "usage: robotsproxy " + c.Usage }
