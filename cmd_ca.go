package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

// runCA implements "robotsproxy ca init -cert FILE -key FILE [-name NAME]".
func runCA(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, "usage: robotsproxy ca init -cert FILE -key FILE [-name NAME]\n       robotsproxy ca show [-config FILE] [-data-dir DIR]\n\ncommands:\n  init  create a CA for intercepting HTTPS (\"robotsproxy ca init -h\" for its flags)\n  show  the CA serve intercepts with, and how clients trust it\n")
		return nil
	}
	if len(args) > 0 && args[0] == "show" {
		return runCAShow(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "init" {
		return usageErr("ca: want \"ca init -cert FILE -key FILE\" or \"ca show\"\n%s", usage)
	}
	fs := newFlagSet("ca init", "ca init -cert FILE -key FILE [-name NAME]", `Create a CA certificate and private key for intercepting HTTPS (mitm.ca_cert,
mitm.ca_key). The key is written with mode 0600; existing files are not
overwritten.`, stderr)
	certFile := fs.String("cert", "", "write the CA certificate (PEM) to `FILE`")
	keyFile := fs.String("key", "", "write the CA private key (PEM, mode 0600) to `FILE`")
	name := fs.String("name", "", "operator `NAME` added to the CA's common name")
	if err := parseFlags(fs, args[1:], stdout); err != nil {
		return err
	}
	if *certFile == "" || *keyFile == "" || fs.NArg() > 0 {
		return usageErr("ca init: want -cert FILE -key FILE\n%s", usage)
	}
	ca, err := mitm.InitCA(*certFile, *keyFile, mitm.CAOptions{Name: *name})
	if err != nil {
		return &exitError{2, fmt.Errorf("ca init: %w", err)}
	}
	c := ca.Certificate()
	fmt.Fprintf(stdout, "wrote %s (certificate) and %s (private key, mode 0600)\nsubject: %s\nvalid until: %s\nsha256: %s\n",
		*certFile, *keyFile, c.Subject, c.NotAfter.UTC().Format("2006-01-02"), ca.Fingerprint())
	return nil
}

// runHashPassword implements "robotsproxy hash-password [-cost N]": it reads
// a password from the first line of stdin and prints its bcrypt hash.
func runHashPassword(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("hash-password", "hash-password [-cost N] < password", `Read a password from the first line of stdin and print its bcrypt hash, for
identity.users.`, stderr)
	cost := fs.Int("cost", bcrypt.DefaultCost, "bcrypt cost `N` (4 to 31)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *cost < bcrypt.MinCost || *cost > bcrypt.MaxCost || fs.NArg() > 0 {
		// bcrypt.GenerateFromPassword would silently use cost 10 below 4.
		return usageErr("hash-password: want [-cost N] with N from %d to %d, the password on stdin\n%s", bcrypt.MinCost, bcrypt.MaxCost, usage)
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return &exitError{2, fmt.Errorf("hash-password: read stdin: %w", err)}
	}
	password := strings.TrimRight(line, "\r\n")
	if password == "" {
		return usageErr("hash-password: want the password on stdin")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), *cost)
	if err != nil {
		return &exitError{2, fmt.Errorf("hash-password: %w", err)}
	}
	fmt.Fprintln(stdout, string(hash))
	return nil
}
