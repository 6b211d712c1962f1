package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/term"
)

// HashPassword is "robotsproxy hash-password": it reads a password and
// prints its bcrypt hash. On a terminal it prompts on stderr, twice,
// without echo (golang.org/x/term); otherwise it reads the first line of
// stdin. A cancelled ctx (SIGINT, SIGTERM) ends it while it waits for the
// password or hashes, the terminal restored.
var HashPassword = Command{
	Name:    "hash-password",
	Summary: "print a bcrypt hash for identity.users",
	Usage:   "hash-password [-cost N] < password",
	run:     runHashPassword,
}

func runHashPassword(ctx context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Read a password and print its bcrypt hash, for identity.users. On a
terminal it asks for the password twice, without echo; otherwise it reads
the first line of stdin.`, stdio.Stderr)
	cost := fs.Int("cost", bcrypt.DefaultCost, "bcrypt cost `N` (4 to 31)")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if err := noArguments(fs, "the password is read from stdin or the terminal, never from an argument"); err != nil {
		return err
	}
	if *cost < bcrypt.MinCost || *cost > bcrypt.MaxCost {
		// bcrypt.GenerateFromPassword would silently use cost 10 below 4.
		return usageErr("hash-password: want [-cost N] with N from %d to %d, the password on stdin\n%s", bcrypt.MinCost, bcrypt.MaxCost, cmd.usage())
	}
	password, err := readPassword(ctx, stdio.Stdin, stdio.Stderr)
	if err != nil {
		return err
	}
	hash, err := cancellable(ctx, func() ([]byte, error) { return bcrypt.GenerateFromPassword(password, *cost) })
	if err != nil {
		return &exitError{2, fmt.Errorf("hash-password: %w", err)}
	}
	fmt.Fprintln(stdio.Stdout, string(hash))
	return nil
}

// readPassword reads the password: from a terminal, prompted twice on
// stderr without echo; else the first line of stdin, its line end removed.
// An empty password is a usage error.
func readPassword(ctx context.Context, stdin io.Reader, stderr io.Writer) ([]byte, error) {
	var password []byte
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p, err := promptPassword(ctx, int(f.Fd()), stderr)
		if err != nil {
			return nil, err
		}
		password = p
	} else {
		line, err := cancellable(ctx, func() (string, error) { return bufio.NewReader(stdin).ReadString('\n') })
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &exitError{2, fmt.Errorf("hash-password: read stdin: %w", err)}
		}
		password = []byte(strings.TrimRight(line, "\r\n"))
	}
	if len(password) == 0 {
		return nil, usageErr("hash-password: want the password on stdin")
	}
	return password, nil
}

// promptPassword asks for the password on the terminal fd twice, without
// echo, and restores the terminal when ctx is cancelled meanwhile.
func promptPassword(ctx context.Context, fd int, stderr io.Writer) ([]byte, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return nil, &exitError{2, fmt.Errorf("hash-password: terminal: %w", err)}
	}
	defer term.Restore(fd, state)
	var entered [2][]byte
	for i, prompt := range []string{"Password: ", "Password again: "} {
		fmt.Fprint(stderr, prompt)
		p, err := cancellable(ctx, func() ([]byte, error) { return term.ReadPassword(fd) })
		fmt.Fprintln(stderr)
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("hash-password: read the password: %w", err)}
		}
		entered[i] = p
	}
	if string(entered[0]) != string(entered[1]) {
		return nil, usageErr("hash-password: the two passwords differ")
	}
	return entered[0], nil
}

// cancellable runs f and returns its result, or ctx's error as soon as ctx
// is done (f then runs on, unobserved, until the process exits): for
// blocking reads and long hashes that take no context.
func cancellable[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
