package cli

import (
	"fmt"
	"io"

	"github.com/robotsproxy/robotsproxy/internal/build"
)

// versionFile, version and commit are what package main was given at
// build time (Main sets them): the VERSION file, and the version and
// commit of -ldflags "-X main.version=... -X main.commit=...".
var (
	versionFile string
	version     string
	commit      string
)

// buildVersion returns the version, the commit and the Go version (see
// build.Info.Resolve).
func buildVersion() (ver, rev, goVersion string) {
	return build.Info{File: versionFile, Version: version, Commit: commit}.Resolve()
}

// runVersion implements "robotsproxy version" and "robotsproxy -version".
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", "Print the version, the commit and the Go version the binary was built with.", stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := noArguments(fs); err != nil {
		return err
	}
	ver, rev, goVersion := buildVersion()
	fmt.Fprintf(stdout, "robotsproxy %s\ncommit %s\ngo %s\n", ver, rev, goVersion)
	return nil
}
