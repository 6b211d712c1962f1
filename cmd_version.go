package main

import (
	_ "embed"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
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

// buildVersion returns the version (-ldflags, else the embedded VERSION),
// the commit (-ldflags, else the VCS stamp of the build information with
// "+dirty" appended for a modified tree, else "unknown", as with
// -buildvcs=false or a build outside a repository) and the Go version the
// binary was built with.
func buildVersion() (ver, rev, goVersion string) {
	ver, rev, goVersion = version, commit, runtime.Version()
	if ver == "" {
		ver = strings.TrimSpace(versionFile)
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if rev == "" {
			rev = vcsRevision(info.Settings)
		}
	}
	if ver == "" {
		ver = "(devel)"
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev, goVersion
}

// vcsRevision is the vcs.revision build setting, "+dirty" appended when
// vcs.modified is true; "" when the build was not stamped.
func vcsRevision(settings []debug.BuildSetting) string {
	rev, modified := "", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		rev += "+dirty"
	}
	return rev
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
