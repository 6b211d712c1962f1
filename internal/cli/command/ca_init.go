package command

import (
	"context"
	"fmt"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

// CAInit is "robotsproxy ca init": a new interception CA, the key written
// 0600; exit 2 when either file exists.
var CAInit = Command{
	Name:    "ca init",
	Summary: "create a CA for intercepting HTTPS",
	Usage:   "ca init -cert FILE -key FILE [-name NAME]",
	run:     runCAInit,
}

func runCAInit(_ context.Context, cmd Command, args []string, stdio Stdio) error {
	fs := cmd.flagSet(`Create a CA certificate and private key for intercepting HTTPS (mitm.ca_cert,
mitm.ca_key). The key is written with mode 0600; existing files are not
overwritten.`, stdio.Stderr)
	certFile := fs.String("cert", "", "write the CA certificate (PEM) to `FILE`")
	keyFile := fs.String("key", "", "write the CA private key (PEM, mode 0600) to `FILE`")
	name := fs.String("name", "", "operator `NAME` added to the CA's common name")
	if err := cmd.parse(fs, args, stdio.Stdout); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	if *certFile == "" || *keyFile == "" {
		return usageErr("ca init: want -cert FILE -key FILE\n%s", cmd.usage())
	}
	ca, err := mitm.InitCA(*certFile, *keyFile, mitm.CAOptions{Name: *name})
	if err != nil {
		return &exitError{2, fmt.Errorf("ca init: %w", err)}
	}
	c := ca.Certificate()
	fmt.Fprintf(stdio.Stdout, "wrote %s (certificate) and %s (private key, mode 0600)\nsubject: %s\nvalid until: %s\nsha256: %s\n",
		*certFile, *keyFile, c.Subject, c.NotAfter.UTC().Format("2006-01-02"), ca.Fingerprint())
	return nil
}
