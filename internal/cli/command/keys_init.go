package command

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// defaultKeyValidity is how long "keys init" makes a key valid: a year,
// so that keys are rotated.
const defaultKeyValidity = 365 * 24 * time.Hour

// KeysInit is "robotsproxy keys init": an Ed25519 key pair for signing
// requests (Web Bot Auth); exit 2 when either key file exists.
var KeysInit = Command{
	Name:    "keys init",
	Summary: "write an Ed25519 key pair for signing requests (Web Bot Auth)",
	Usage:   "keys init [-valid DURATION] DIR",
	run:     runKeysInit,
}

func runKeysInit(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Write a new Ed25519 key pair for Web Bot Auth signatures into DIR (created
with mode 0700 when missing): `+signing.PrivateKeyFile+` (PKCS#8, mode 0600) and `+signing.PublicKeyFile+`.
Existing files are not overwritten. With -valid (default one year) it also
writes `+signing.ValidityFile+`: the key is valid from now for that long (the JWK's
nbf and exp in the key directory; robotsproxy refuses to sign with it
outside them); -valid 0 writes none (valid at all times). Prints the key's
JWK thumbprint, the keyid sites will see. Name DIR in
signing.identities[].keys.`, stdio.Stderr)
	valid := fs.Duration("valid", defaultKeyValidity, "how long the key is valid from now (0: no bound)")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if *valid < 0 {
		return usageErr("keys init: -valid %v: want 0 or a positive duration (e.g. 8760h)\n%s", *valid, cmd.usage())
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return usageErr("keys init: want one DIR\n%s", cmd.usage())
	}
	dir := fs.Arg(0)
	k, err := signing.GenerateKeyDir(dir, rand.Reader)
	if err != nil {
		return &exitError{2, fmt.Errorf("keys init: %w", err)}
	}
	fmt.Fprintf(stdio.Stdout, "wrote %s (private key, mode 0600) and %s\n",
		filepath.Join(dir, signing.PrivateKeyFile), filepath.Join(dir, signing.PublicKeyFile))
	if *valid > 0 {
		now := time.Now()
		if err := signing.WriteValidity(dir, now, now.Add(*valid)); err != nil {
			return &exitError{2, fmt.Errorf("keys init: %w", err)}
		}
		fmt.Fprintf(stdio.Stdout, "wrote %s: valid until %s\n", filepath.Join(dir, signing.ValidityFile), now.Add(*valid).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(stdio.Stdout, "keyid (JWK SHA-256 thumbprint): %s\n", k.ID)
	return nil
}
