package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// help is what "robotsproxy", "robotsproxy -h" and "robotsproxy help"
// print: the commands, then each one's synopsis.
const help = `robotsproxy: a forward HTTP(S) proxy that makes crawlers obey robots.txt (RFC 9309)

commands:
  serve          run the proxy (also when the first argument is a flag)
  check          decide URLs against a robots.txt file, offline
  audit report   summarise audit logs as text, json, csv or html
  audit verify   verify an audit log's hash chain and re-decide its decisions
  audit show     print an archived robots.txt body and its fetch records
  ca init        create a CA for intercepting HTTPS
  ca show        print the CA serve intercepts with, and how clients trust it
  keys init      write an Ed25519 key pair for signing requests (Web Bot Auth)
  keys directory write the key directory and agent cards as static files
  hash-password  print a bcrypt hash for identity.users
  healthcheck    probe a running serve's admin endpoint (for container health checks)
  version        print the version, the commit and the Go version
  help           print this help

"robotsproxy COMMAND -h" prints a command's flags.
Exit codes: 0 success; 1 check: a URL is disallowed, audit verify: a line does
not verify, healthcheck: not ready, serve: a runtime failure; 2 usage,
configuration or I/O error; 130, 143: ended by SIGINT, SIGTERM.

` + usage

// errHelp ends a command that printed its help because of -h: exit 0.
var errHelp = &exitError{0, errors.New("")}

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

// isHelp reports whether arg asks for help where a subcommand is expected
// ("audit -h", "ca --help").
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
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
