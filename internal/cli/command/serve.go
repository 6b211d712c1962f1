package command

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/build"
	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/server"
)

// Serve is "robotsproxy serve": the proxy, on the configuration file and
// the flags that override its keys, reloaded on SIGHUP (see
// server.Server.Run). b is the build its started line reports. Exit 0
// after a graceful shutdown on SIGINT or SIGTERM, 1 on a runtime failure
// (a listener it cannot open), 2 on a configuration error.
func Serve(b build.Info) Command {
	return Command{
		Name:    "serve",
		Summary: "run the proxy (also when the first argument is a flag)",
		Usage: "serve [-config FILE] [-listen HOST:PORT] [-admin-listen HOST:PORT] [-allow-private] [-allow-open-proxy] [-mode enforce|report] " +
			"[-audit-log FILE] [-archive-dir DIR] [-ca-cert FILE -ca-key FILE] [-mitm-mode intercept|host-level] [-data-dir DIR] " +
			"[-connect-ports PORTS] [-upstream-ca-file FILE] [-check-config]",
		run: func(ctx context.Context, cmd Command, args []string, stdio Stdio) error {
			return runServe(ctx, cmd, args, stdio, b)
		},
	}
}

func runServe(ctx context.Context, cmd Command, args []string, stdio Stdio, b build.Info) error {
	f := newServeFlags(cmd, stdio.Stderr)
	if err := cmd.parse(f.fs, args, stdio.Stdout); err != nil {
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
	logger := zerolog.New(stdio.Stderr).With().Timestamp().Logger()
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
		fmt.Fprintf(stdio.Stdout, "configuration %s with the flags: valid (mode %s, listen %s, admin_listen %q)\n", file, cfg.Mode, cfg.Listen, cfg.AdminListen)
		return nil
	}
	srv, err := server.New(cfg, stdio.Stdout, logger)
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
	ver, _, _ := b.Resolve()
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

func newServeFlags(cmd Command, stderr io.Writer) *serveFlags {
	fs := cmd.flagSet(`Run the proxy. Flags override the keys of the configuration file; the file
is read again on SIGHUP, and the flags keep winning.

The admin listener (admin_listen, -admin-listen; 127.0.0.1:9090 by default)
serves /healthz, /readyz, /metrics, and the live view: /live, a page of this
replica's decisions as they happen, filterable, and /live/events, the same as
a stream that "robotsproxy watch" prints in a terminal (docs/live.md; the
live.* keys bound it).`, stderr)
	return &serveFlags{
		fs:           fs,
		config:       fs.String("config", defaultConfig, "configuration `FILE`"),
		listen:       fs.String("listen", "", "proxy listen address `HOST:PORT` (overrides listen)"),
		admin:        fs.String("admin-listen", "", "admin listen address `HOST:PORT` for /healthz, /readyz, /metrics and the live view /live (overrides admin_listen)"),
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
