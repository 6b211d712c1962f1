package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
configuration or I/O error.

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

// parseFlags parses args with fs. -h and -help print fs's usage on stdout
// and return errHelp; any other flag error is a usage error (exit 2)
// followed by the usage on stderr.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	usage := fs.Usage
	fs.Usage = func() {} // printed below, on the right stream
	err := fs.Parse(args)
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

// isHelp reports whether arg asks for help where a subcommand is expected
// ("audit -h", "ca --help").
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}
