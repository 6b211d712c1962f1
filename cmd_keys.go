package main

import (
	"crypto/rand"
	"fmt"
	"io"
	"path/filepath"

	"github.com/robotsproxy/robotsproxy/signing"
)

// runKeys implements "robotsproxy keys init DIR".
func runKeys(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, "usage: robotsproxy keys init DIR\n\ncommands:\n  init  write an Ed25519 signing key pair (\"robotsproxy keys init -h\")\n")
		return nil
	}
	if len(args) == 0 || args[0] != "init" {
		return usageErr("keys: want \"keys init DIR\"\n%s", usage)
	}
	fs := newFlagSet("keys init", "keys init DIR", `Write a new Ed25519 key pair for Web Bot Auth signatures into DIR (created
with mode 0700 when missing): `+signing.PrivateKeyFile+` (PKCS#8, mode 0600) and `+signing.PublicKeyFile+`.
Existing files are not overwritten. Prints the key's JWK thumbprint, the
keyid sites will see. Name DIR in signing.identities[].keys.`, stderr)
	if err := parseFlags(fs, args[1:], stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return usageErr("keys init: want one DIR\n%s", usage)
	}
	dir := fs.Arg(0)
	k, err := signing.GenerateKeyDir(dir, rand.Reader)
	if err != nil {
		return &exitError{2, fmt.Errorf("keys init: %w", err)}
	}
	fmt.Fprintf(stdout, "wrote %s (private key, mode 0600) and %s\nkeyid (JWK SHA-256 thumbprint): %s\n",
		filepath.Join(dir, signing.PrivateKeyFile), filepath.Join(dir, signing.PublicKeyFile), k.ID)
	return nil
}
