package main

import (
	_ "embed"
	"fmt"
	"io"

	"github.com/robotsproxy/robotsproxy/internal/build"
)

// versionFile is the repository's VERSION file, embedded at build time,
// so that a plain "go build" knows its version.
//
//go:embed VERSION
var versionFile string

// version and commit override VERSION and the VCS stamp when set at build
// time:
//
//	go build -ldflags "-X main.version=$(cat VERSION) -X main.commit=$(git rev-parse HEAD)"
var (
	version string
	commit  string
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
