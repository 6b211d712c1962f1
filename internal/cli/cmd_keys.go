package cli

import (
	"crypto/rand"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// defaultKeyValidity is how long "keys init" makes a key valid: a year,
// so that keys are rotated.
const defaultKeyValidity = 365 * 24 * time.Hour

// runKeys implements "robotsproxy keys init DIR" and "robotsproxy keys
// directory ..." (runKeysDirectory).
func runKeys(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, "usage: robotsproxy keys init [-valid DURATION] DIR\n       robotsproxy keys directory [-config FILE] -o DIR [-authority HOST] [-valid DURATION]\n\ncommands:\n  init       write an Ed25519 signing key pair (\"robotsproxy keys init -h\")\n  directory  write the key directory and the agent cards as static files (\"robotsproxy keys directory -h\")\n")
		return nil
	}
	if len(args) > 0 && args[0] == "directory" {
		return runKeysDirectory(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "init" {
		return usageErr("keys: want \"keys init DIR\" or \"keys directory -o DIR\"\n%s", usage)
	}
	fs := newFlagSet("keys init", "keys init [-valid DURATION] DIR", `Write a new Ed25519 key pair for Web Bot Auth signatures into DIR (created
with mode 0700 when missing): `+signing.PrivateKeyFile+` (PKCS#8, mode 0600) and `+signing.PublicKeyFile+`.
Existing files are not overwritten. With -valid (default one year) it also
writes `+signing.ValidityFile+`: the key is valid from now for that long (the JWK's
nbf and exp in the key directory; robotsproxy refuses to sign with it
outside them); -valid 0 writes none (valid at all times). Prints the key's
JWK thumbprint, the keyid sites will see. Name DIR in
signing.identities[].keys.`, stderr)
	valid := fs.Duration("valid", defaultKeyValidity, "how long the key is valid from now (0: no bound)")
	if err := parseFlags(fs, args[1:], stdout); err != nil {
		return err
	}
	if *valid < 0 {
		return usageErr("keys init: -valid %v: want 0 or a positive duration (e.g. 8760h)\n%s", *valid, usage)
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return usageErr("keys init: want one DIR\n%s", usage)
	}
	dir := fs.Arg(0)
	k, err := signing.GenerateKeyDir(dir, rand.Reader)
	if err != nil {
		return &exitError{2, fmt.Errorf("keys init: %w", err)}
	}
	fmt.Fprintf(stdout, "wrote %s (private key, mode 0600) and %s\n",
		filepath.Join(dir, signing.PrivateKeyFile), filepath.Join(dir, signing.PublicKeyFile))
	if *valid > 0 {
		now := time.Now()
		if err := signing.WriteValidity(dir, now, now.Add(*valid)); err != nil {
			return &exitError{2, fmt.Errorf("keys init: %w", err)}
		}
		fmt.Fprintf(stdout, "wrote %s: valid until %s\n", filepath.Join(dir, signing.ValidityFile), now.Add(*valid).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(stdout, "keyid (JWK SHA-256 thumbprint): %s\n", k.ID)
	return nil
}
