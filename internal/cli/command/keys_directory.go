package command

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/internal/server"
)

// KeysDirectory is "robotsproxy keys directory": the key directory and the
// Signature Agent Cards of signing.identities as static files, each with
// a .headers file of the header fields to send with it.
var KeysDirectory = Command{
	Name:    "keys directory",
	Summary: "write the key directory and agent cards as static files",
	Usage:   "keys directory [-config FILE] -o DIR [-authority HOST] [-valid DURATION]",
	run:     runKeysDirectory,
}

func runKeysDirectory(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Write the key directory (`+signing.DirectoryPath+`) and the Signature
Agent Cards of the configuration's signing.identities as static files under
DIR, for hosting at https://HOST. Beside each file, FILE`+signing.HeadersSuffix+` holds the header
fields to send with it (Content-Type, Cache-Control, Content-Digest,
Signature-Input, Signature): the signatures cover HOST and expire after
-valid, so write the files again before then.`, stdio.Stderr)
	cfgPath := fs.String("config", defaultConfig, "configuration `FILE` naming signing.identities")
	out := fs.String("o", "", "write the files under `DIR` (DIR/.well-known/...)")
	authority := fs.String("authority", "", "the `HOST` (and :PORT when not 443) that will serve the files: a signature_agent host or one of signing.directory_authorities (default: the host of the identities' signature_agent URLs, when they share one)")
	valid := fs.Duration("valid", signing.DefaultStaticValidity, "how long the files' signatures are valid (`DURATION`)")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	if *out == "" || *valid <= 0 {
		return usageErr("keys directory: want -o DIR, and a positive -valid\n%s", cmd.usage())
	}
	cfg, err := config.LoadFile(*cfgPath)
	if err != nil {
		return &exitError{2, fmt.Errorf("keys directory: %w", err)}
	}
	p, host, err := staticDirectory(cfg, *authority)
	if err != nil {
		return &exitError{2, fmt.Errorf("keys directory: %w", err)}
	}
	now := time.Now()
	written, err := p.WriteStatic(*out, host, now, *valid)
	if err != nil {
		return &exitError{2, fmt.Errorf("keys directory: %w", err)}
	}
	for _, w := range written {
		fmt.Fprintf(stdio.Stdout, "wrote %s\n", w)
	}
	fmt.Fprintf(stdio.Stdout, "%d keys; serve %s at https://%s%s with the header fields of its %s file; the signatures expire %s\n",
		len(p.Keys()), *out, host, signing.DirectoryPath, signing.HeadersSuffix, now.Add(*valid).UTC().Format(time.RFC3339))
	return nil
}

// staticDirectory reads the keys of cfg's signing identities into a
// directory, and returns it with the authority to sign for: authority,
// which must be one the directory vouches for (a signature_agent host or
// one of signing.directory_authorities), or the host the identities'
// signature_agent URLs share.
func staticDirectory(cfg config.Config, authority string) (*signing.Published, string, error) {
	if len(cfg.Signing.Identities) == 0 {
		return nil, "", errors.New("signing.identities: none: nothing to publish")
	}
	st, err := server.SigningSettings(cfg)
	if err != nil {
		return nil, "", err
	}
	entries, err := server.DirectoryEntries(cfg.Signing, st)
	if err != nil {
		return nil, "", err
	}
	p, err := signing.Publish(entries, cfg.Signing.DirectoryAuthorities...)
	if err != nil {
		return nil, "", err
	}
	if authority != "" {
		norm, err := signing.NormalizeAuthority(authority, "https")
		if err != nil || signing.CheckAuthority(authority) != nil || !p.Serves(norm) {
			return nil, "", fmt.Errorf("-authority %q: the directory is signed only for %s: name another host in signing.directory_authorities",
				authority, strings.Join(p.Authorities(), ", "))
		}
		return p, authority, nil
	}
	for _, id := range cfg.Signing.Identities {
		u, err := url.Parse(id.SignatureAgent)
		if err != nil {
			return nil, "", fmt.Errorf("signature_agent %q: %w", id.SignatureAgent, err)
		}
		switch {
		case authority == "":
			authority = u.Host
		case authority != u.Host:
			return nil, "", fmt.Errorf("the identities' signature_agent URLs name %s and %s: give -authority HOST", authority, u.Host)
		}
	}
	return p, authority, nil
}
