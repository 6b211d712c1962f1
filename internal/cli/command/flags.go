package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagSet returns c's flag set: its -h prints "usage: robotsproxy " and
// c.Usage, the description and the flags.
func (c Command) flagSet(description string, stderr io.Writer) *flag.FlagSet {
	return newFlagSet(c.Name, c.Usage, description, stderr)
}

// parse parses args with fs (parseFlags), or, for FlagsOf, hands fs over
// and ends the command as -h does.
func (c Command) parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if c.collect != nil {
		c.collect(fs)
		return errHelp
	}
	return parseFlags(fs, args, stdout)
}

// newFlagSet returns a flag set whose -h prints "usage: robotsproxy
// SYNOPSIS", the description and the flags.
func newFlagSet(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: robotsproxy %s\n\n%s\n", synopsis, description)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(fs.Output(), "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args with fs, the one flag rule of every command:
// flags may come anywhere, before, between or after the positional
// arguments, and "--" ends them (what follows is positional even when it
// starts with "-"); "-" is a positional argument (stdin). fs.Args() then
// holds the positional arguments in their order. -h and -help print fs's
// usage on stdout and return errHelp; any other flag error is a usage
// error (exit 2) followed by the usage on stderr.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	usage := fs.Usage
	fs.Usage = func() {} // printed below, on the right stream
	err := fs.Parse(interspersed(fs, args))
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return errHelp
	case err != nil:
		fs.Usage()
		return usageErr("%s: %v", fs.Name(), err)
	}
	return nil
}

// noArguments refuses the positional arguments of a command that takes
// none (flags only), with the same usage error (exit 2), its usage on
// stderr, for every such command; hint, when given, is added to it.
func noArguments(fs *flag.FlagSet, hint ...string) error {
	if fs.NArg() == 0 {
		return nil
	}
	fs.Usage()
	return usageErr("%s: unexpected arguments %q: it takes flags only (\"robotsproxy %s -h\" lists them)%s",
		fs.Name(), fs.Args(), fs.Name(), strings.Join(append([]string{""}, hint...), "; "))
}

// interspersed reorders args for flag.FlagSet.Parse, which stops at the
// first positional argument: the flags, each with the value of a
// non-boolean flag given as the next argument, keep their order, then
// "--", then the positional arguments in their order. An unknown flag is
// kept as a flag, so that Parse reports it.
func interspersed(fs *flag.FlagSet, args []string) []string {
	flags := make([]string, 0, len(args)+1)
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case len(a) < 2 || a[0] != '-':
			pos = append(pos, a)
		default:
			flags = append(flags, a)
			if takesValue(fs, a) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return append(append(flags, "--"), pos...)
}

// takesValue reports whether the flag argument arg ("-name", "--name")
// takes the next argument as its value: a known flag that is not boolean,
// written without "=value".
func takesValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}
