// Command robotsproxy is a forward HTTP(S) proxy that makes crawlers obey
// robots.txt (RFC 9309).
//
//	robotsproxy serve [-config FILE] [-listen HOST:PORT] [-admin-listen HOST:PORT] [-allow-private] [-allow-open-proxy] [-mode enforce|report] [-ca-cert FILE -ca-key FILE]
//	robotsproxy check [-json] ROBOTS_FILE USER_AGENT URL...
//	robotsproxy ca init -cert FILE -key FILE [-name NAME]
//	robotsproxy hash-password [-cost N] < password
//	robotsproxy audit report [-format text|json|csv|html] [-o FILE] [-since TIME] [-until TIME] [-token T] [-host H] [-top N] LOG...
//	robotsproxy audit verify [-archive DIR] [-config FILE] [-genesis] [-allow-unverifiable] LOG...
//	robotsproxy audit show [-archive DIR] [-config FILE] [-body] SHA
//
// Exit codes: 0 success (check: all allowed); 1 check: at least one URL
// disallowed, audit verify: a line does not verify, serve: a runtime
// failure; 2 usage, configuration or I/O error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/check"
	"github.com/robotsproxy/robotsproxy/config"
	"github.com/robotsproxy/robotsproxy/server"
)

const defaultConfig = "config.yaml"

const usage = `usage:
  robotsproxy serve [-config FILE] [-listen HOST:PORT] [-admin-listen HOST:PORT] [-allow-private] [-allow-open-proxy] [-mode enforce|report] [-ca-cert FILE -ca-key FILE]
  robotsproxy check [-json] ROBOTS_FILE USER_AGENT URL...   (URL "-" reads URLs from stdin)
  robotsproxy ca init -cert FILE -key FILE [-name NAME]     (a new interception CA; the key is written 0600)
  robotsproxy hash-password [-cost N] < password            (a bcrypt hash for identity.users)
  robotsproxy audit report [-format text|json|csv|html] [-o FILE] [-since TIME] [-until TIME] [-token T] [-host H] [-top N] LOG...
                                                            (LOG: audit log file, rotated or .gz; - is stdin)
  robotsproxy audit verify [-archive DIR] [-config FILE] [-genesis] [-allow-unverifiable] LOG...
                                                            (the hash chain, and every decision re-decided from the robots.txt archive; LOG oldest first)
  robotsproxy audit show [-archive DIR] [-config FILE] [-body] SHA
                                                            (an archived robots.txt body and its fetch records)
`

// exitError carries an exit code out of run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{2, fmt.Errorf(format, args...)}
}

// errDisallowed is check's "at least one URL disallowed" outcome.
var errDisallowed = &exitError{1, errors.New("")}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode maps run's error to the process exit code, printing it.
func exitCode(err error, stderr io.Writer) int {
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

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && (args[0] == "serve" || args[0] == "check" || args[0] == "help" || args[0] == "ca" || args[0] == "hash-password" || args[0] == "audit") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "check":
		return runCheck(args, stdin, stdout, stderr)
	case "ca":
		return runCA(args, stdout, stderr)
	case "hash-password":
		return runHashPassword(args, stdin, stdout, stderr)
	case "audit":
		return runAudit(args, stdin, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return runServe(ctx, args, stdout, stderr)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", defaultConfig, "configuration `FILE`")
	listen := fs.String("listen", "", "proxy listen address `HOST:PORT` (overrides listen)")
	admin := fs.String("admin-listen", "", "admin listen address `HOST:PORT` for /healthz and /metrics (overrides admin_listen)")
	allowPrivate := fs.Bool("allow-private", false, "allow loopback, private and link-local destinations (overrides allow_private)")
	mode := fs.String("mode", "", "`enforce` or report: how robots.txt denials are acted on (overrides mode)")
	allowOpen := fs.Bool("allow-open-proxy", false, "allow listening beyond loopback without identity.users or client_ranges, and an admin listener beyond loopback (overrides allow_open_proxy)")
	caCert := fs.String("ca-cert", "", "intercept HTTPS with the CA certificate `FILE` (overrides mitm.ca_cert)")
	caKey := fs.String("ca-key", "", "the CA's private key `FILE` (overrides mitm.ca_key)")
	if err := fs.Parse(args); err != nil {
		return usageErr("serve: %v", err)
	}
	if fs.NArg() > 0 {
		return usageErr("serve: unexpected arguments %q\n%s", fs.Args(), usage)
	}
	logger := zerolog.New(stderr).With().Timestamp().Logger()
	cfg, err := loadConfig(*cfgPath, isSet(fs, "config"), logger)
	if err != nil {
		return &exitError{2, err}
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if isSet(fs, "admin-listen") {
		cfg.AdminListen = *admin
	}
	if *allowPrivate {
		cfg.AllowPrivate = true
	}
	if *allowOpen {
		cfg.AllowOpenProxy = true
	}
	if *mode != "" {
		cfg.Mode = *mode
	}
	if isSet(fs, "ca-cert") || isSet(fs, "ca-key") {
		cfg.MITM.CACert, cfg.MITM.CAKey = *caCert, *caKey
	}
	if err := cfg.Validate(); err != nil {
		return &exitError{2, fmt.Errorf("flags: %w", err)}
	}
	srv, err := server.New(cfg, stdout, logger)
	if err != nil {
		return &exitError{2, err}
	}
	return srv.Run(ctx)
}

// loadConfig reads the configuration. A missing default ./config.yaml means
// the built-in defaults; a missing file named with -config is an error.
func loadConfig(path string, explicit bool, logger zerolog.Logger) (config.Config, error) {
	cfg, err := config.LoadFile(path)
	if err != nil && !explicit && errors.Is(err, fs.ErrNotExist) {
		logger.Info().Str("config", path).Msg("no configuration file; using the built-in defaults")
		return config.Default(), nil
	}
	return cfg, err
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "write one JSON object per URL")
	if err := fs.Parse(args); err != nil {
		return usageErr("check: %v", err)
	}
	if fs.NArg() < 3 {
		return usageErr("check: want ROBOTS_FILE USER_AGENT URL...\n%s", usage)
	}
	all, err := check.Run(fs.Arg(0), fs.Arg(1), fs.Args()[2:], check.Options{JSON: *asJSON, Stdin: stdin, Stdout: stdout})
	switch {
	case err != nil:
		return &exitError{2, fmt.Errorf("check: %w", err)}
	case !all:
		return errDisallowed
	}
	return nil
}
