// Command robotsproxy is a forward HTTP(S) proxy that makes crawlers obey
// robots.txt (RFC 9309).
//
//	robotsproxy serve [-config FILE] [-listen HOST:PORT] [-admin-listen HOST:PORT] [-allow-private] [-allow-open-proxy] [-mode enforce|report] [-audit-log FILE] [-archive-dir DIR] [-ca-cert FILE -ca-key FILE] [-mitm-mode intercept|host-level] [-data-dir DIR] [-connect-ports PORTS] [-upstream-ca-file FILE] [-check-config]
//	robotsproxy check [-json] [-rfc] [-usage PURPOSE] [-license FILE] ROBOTS_FILE USER_AGENT URL...
//	robotsproxy ca init -cert FILE -key FILE [-name NAME]
//	robotsproxy ca show [-config FILE] [-data-dir DIR]
//	robotsproxy keys init DIR
//	robotsproxy keys directory [-config FILE] -o DIR [-authority HOST] [-valid DURATION]
//	robotsproxy hash-password [-cost N] < password
//	robotsproxy audit report [-format text|json|csv|html] [-o FILE] [-since TIME] [-until TIME] [-token T] [-host H] [-top N] LOG...
//	robotsproxy audit verify [-archive DIR] [-config FILE] [-chain-only] [-genesis] [-allow-unverifiable] LOG...
//	robotsproxy audit show [-archive DIR] [-config FILE] [-body] SHA
//	robotsproxy healthcheck [-addr HOST:PORT] [-path /readyz|/healthz] [-timeout D] [-wait D]
//	robotsproxy version
//
// With no arguments, -h, --help or help, it lists the commands; every
// command takes -h. Flags without a command are serve's. Every command
// takes its flags anywhere among its arguments; "--" ends them
// (parseFlags).
//
// serve reloads its configuration on SIGHUP (see server.Server.Run).
// SIGINT and SIGTERM end every command within a second (runWithSignals).
//
// Exit codes: 0 success (check: all allowed; serve: shut down on a
// signal); 1 check: at least one URL disallowed, audit verify: a line does
// not verify, healthcheck: not ready or not answering, serve: a runtime
// failure; 2 usage, configuration or I/O error; 130 and 143: ended by
// SIGINT or SIGTERM (serve: by a second one during its shutdown).
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
	"strconv"
	"strings"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/server"
)

const defaultConfig = "config.yaml"

const usage = `usage:
  robotsproxy serve [-config FILE] [-listen HOST:PORT] [-admin-listen HOST:PORT] [-allow-private] [-allow-open-proxy] [-mode enforce|report] [-audit-log FILE] [-archive-dir DIR] [-ca-cert FILE -ca-key FILE] [-mitm-mode intercept|host-level] [-data-dir DIR] [-connect-ports PORTS] [-upstream-ca-file FILE] [-check-config]
  robotsproxy check [-json] [-rfc] ROBOTS_FILE USER_AGENT URL... (URL "-" reads URLs from stdin)
                                                            (-usage PURPOSE: also the usage preference for train-ai, search, ai-input...)
  robotsproxy ca init -cert FILE -key FILE [-name NAME]     (a new interception CA; the key is written 0600)
  robotsproxy ca show [-config FILE] [-data-dir DIR]        (the CA serve intercepts with, its fingerprint, and how clients trust it)
  robotsproxy keys init [-valid D] DIR                      (an Ed25519 signing key pair, the private key 0600, valid a year; prints its keyid)
  robotsproxy keys directory [-config FILE] -o DIR [-authority HOST] [-valid DURATION]
                                                            (the key directory and agent cards as static files, with their headers)
  robotsproxy hash-password [-cost N] < password            (a bcrypt hash for identity.users; on a terminal it prompts)
  robotsproxy audit report [-format text|json|csv|html] [-o FILE] [-since TIME] [-until TIME] [-token T] [-host H] [-top N] LOG...
                                                            (LOG: audit log file, rotated or .gz; - is stdin)
  robotsproxy audit verify [-archive DIR] [-config FILE] [-chain-only] [-genesis] [-allow-unverifiable] LOG...
                                                            (the hash chain, and every decision re-decided from the robots.txt archive; LOG oldest first)
  robotsproxy audit show [-archive DIR] [-config FILE] [-body] SHA
                                                            (an archived robots.txt body and its fetch records)
  robotsproxy healthcheck [-addr HOST:PORT] [-path /readyz|/healthz] [-timeout D] [-wait D]
                                                            (exit 0 when the admin endpoint answers 200: for HEALTHCHECK)
  robotsproxy version                                       (also -version)

Flags may come before, between or after the arguments; "--" ends them.
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
	os.Exit(runWithSignals(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
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

// commandOf splits args into the command and its arguments: "help" for
// none, -h, --help and help; "version" for -version; "serve" when the
// first argument is another flag; "" for an unknown command.
func commandOf(args []string) (cmd string, rest []string) {
	if len(args) == 0 {
		return "help", nil
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return "help", nil
	case "-version", "--version":
		return "version", args[1:]
	case "serve", "check", "ca", "keys", "hash-password", "audit", "version", "healthcheck":
		return args[0], args[1:]
	}
	if strings.HasPrefix(args[0], "-") {
		return "serve", args // flags without a command are serve's
	}
	return "", args
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd, args := commandOf(args)
	switch cmd {
	case "help":
		fmt.Fprint(stdout, help)
		return nil
	case "serve":
		return runServe(ctx, args, stdout, stderr)
	case "check":
		return runCheck(args, stdin, stdout, stderr)
	case "ca":
		return runCA(args, stdout, stderr)
	case "keys":
		return runKeys(args, stdout, stderr)
	case "hash-password":
		return runHashPassword(ctx, args, stdin, stdout, stderr)
	case "audit":
		return runAudit(args, stdin, stdout, stderr)
	case "version":
		return runVersion(args, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, args, stdout, stderr)
	}
	return usageErr("unknown command %q\n%s", args[0], help)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newServeFlags(stderr)
	if err := parseFlags(f.fs, args, stdout); err != nil {
		return err
	}
	if err := noArguments(f.fs); err != nil {
		return err
	}
	// SIGHUP reloads the configuration; registered before anything is
	// loaded, so that an early one does not end the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	logger := zerolog.New(stderr).With().Timestamp().Logger()
	cfg, file, err := loadConfig(*f.config, isSet(f.fs, "config"), logger)
	if err != nil {
		return &exitError{2, err}
	}
	if cfg, err = f.apply(cfg); err != nil {
		return &exitError{2, err}
	}
	if *f.checkConfig {
		if file == "" {
			file = "none (built-in defaults)"
		}
		fmt.Fprintf(stdout, "configuration %s with the flags: valid (mode %s, listen %s, admin_listen %q)\n", file, cfg.Mode, cfg.Listen, cfg.AdminListen)
		return nil
	}
	srv, err := server.New(cfg, stdout, logger)
	if err != nil {
		return &exitError{2, err}
	}
	// A reload needs the file: a missing one is an error then, even the
	// default ./config.yaml. Flags keep winning over the file.
	load := func() (config.Config, error) {
		cfg, err := config.DecodeFile(*f.config)
		if err != nil {
			return cfg, err
		}
		return f.apply(cfg)
	}
	ver, _, _ := buildVersion()
	return srv.Run(ctx, server.RunOptions{Reload: hup, Load: load, ConfigFile: file, Version: ver})
}

// serveFlags are serve's flags; all but -config override configuration
// keys.
type serveFlags struct {
	fs                                         *flag.FlagSet
	config, listen, admin, mode, caCert, caKey *string
	auditLog, archiveDir, dataDir, mitmMode    *string
	connectPorts, upstreamCA                   *string
	allowPrivate, allowOpen, checkConfig       *bool
}

func newServeFlags(stderr io.Writer) *serveFlags {
	fs := newFlagSet("serve", "serve [flags]", `Run the proxy. Flags override the keys of the configuration file; the file
is read again on SIGHUP, and the flags keep winning.`, stderr)
	return &serveFlags{
		fs:           fs,
		config:       fs.String("config", defaultConfig, "configuration `FILE`"),
		listen:       fs.String("listen", "", "proxy listen address `HOST:PORT` (overrides listen)"),
		admin:        fs.String("admin-listen", "", "admin listen address `HOST:PORT` for /healthz, /readyz and /metrics (overrides admin_listen)"),
		allowPrivate: fs.Bool("allow-private", false, "allow loopback, private and link-local destinations (overrides allow_private)"),
		mode:         fs.String("mode", "", "how robots.txt denials are acted on, `MODE` enforce or report (overrides mode)"),
		allowOpen:    fs.Bool("allow-open-proxy", false, "allow listening beyond loopback without identity.users or client_ranges, and an admin listener beyond loopback (overrides allow_open_proxy)"),
		caCert:       fs.String("ca-cert", "", "intercept HTTPS with the CA certificate `FILE` (overrides mitm.ca_cert)"),
		caKey:        fs.String("ca-key", "", "the CA's private key `FILE` (overrides mitm.ca_key)"),
		auditLog:     fs.String("audit-log", "", "write audit lines to `FILE`, rotated (overrides log.file; default stdout)"),
		checkConfig:  fs.Bool("check-config", false, "validate the configuration with the flags applied, print what is in force, and exit: 0 when it is valid, 2 when not"),
		archiveDir:   fs.String("archive-dir", "", "keep every robots.txt fetched in `DIR`, for audit verify (overrides audit.archive_dir)"),
		dataDir:      fs.String("data-dir", "", "keep the proxy's state, the interception CA it creates, in `DIR` (overrides data_dir; default $XDG_STATE_HOME/robotsproxy, else ~/.local/state/robotsproxy)"),
		mitmMode:     fs.String("mitm-mode", "", "how HTTPS is enforced, `MODE` intercept (every request on its path) or host-level (opaque tunnels, paths unchecked) (overrides mitm.mode)"),
		connectPorts: fs.String("connect-ports", "", "the `PORTS` CONNECT may reach, comma-separated, such as 443,8443 (overrides connect.ports; default 443)"),
		upstreamCA:   fs.String("upstream-ca-file", "", "trust the PEM CA certificates in `FILE` for origins too, beside the system roots (overrides upstream.ca_file)"),
	}
}

// apply sets the keys given as flags in cfg, decoded from the file, and
// validates the result once, so that a flag can complete or correct the
// file (-allow-open-proxy, -listen, -ca-cert); at start and at every
// reload.
func (f *serveFlags) apply(cfg config.Config) (config.Config, error) {
	if *f.listen != "" {
		cfg.Listen = *f.listen
	}
	if isSet(f.fs, "admin-listen") {
		cfg.AdminListen = *f.admin
	}
	if *f.allowPrivate {
		cfg.AllowPrivate = true
	}
	if *f.allowOpen {
		cfg.AllowOpenProxy = true
	}
	if *f.mode != "" {
		cfg.Mode = *f.mode
	}
	if isSet(f.fs, "audit-log") {
		cfg.Log.File = *f.auditLog
	}
	if isSet(f.fs, "archive-dir") {
		cfg.Audit.ArchiveDir = *f.archiveDir
	}
	if isSet(f.fs, "data-dir") {
		cfg.DataDir = *f.dataDir
	}
	if isSet(f.fs, "mitm-mode") {
		cfg.MITM.Mode = *f.mitmMode
	}
	if isSet(f.fs, "connect-ports") {
		ports, err := parsePorts(*f.connectPorts)
		if err != nil {
			return cfg, fmt.Errorf("-connect-ports: %w", err)
		}
		cfg.Connect.Ports = ports
	}
	if isSet(f.fs, "upstream-ca-file") {
		cfg.Upstream.CAFile = *f.upstreamCA
	}
	if isSet(f.fs, "ca-cert") || isSet(f.fs, "ca-key") {
		cfg.MITM.CACert, cfg.MITM.CAKey = *f.caCert, *f.caKey
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config %s with the flags: %w", *f.config, err)
	}
	return cfg, nil
}

// parsePorts reads a comma-separated list of port numbers ("443,8443");
// their range is checked with the configuration (connect.ports).
func parsePorts(list string) ([]int, error) {
	var ports []int
	for _, f := range strings.Split(list, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("want comma-separated port numbers such as 443,8443, got %q", list)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// loadConfig reads the configuration and returns it with the file it came
// from. A missing default ./config.yaml means the built-in defaults (and
// file ""); a missing file named with -config is an error.
func loadConfig(path string, explicit bool, logger zerolog.Logger) (cfg config.Config, file string, err error) {
	cfg, err = config.DecodeFile(path) // validated with the flags applied
	if err != nil && !explicit && errors.Is(err, fs.ErrNotExist) {
		logger.Info().Str("config", path).Msg("no configuration file; using the built-in defaults")
		return config.Default(), "", nil
	}
	return cfg, path, err
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
