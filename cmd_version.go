package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time:
//
//	go build -ldflags "-X main.version=$(cat VERSION) -X main.commit=$(git rev-parse HEAD)"
//
// Empty, they come from the module's build information.
var (
	version string
	commit  string
)

// buildVersion returns the version, the commit ("unknown" when neither
// -ldflags nor the VCS stamp give one, "+dirty" appended for a modified
// tree) and the Go version the binary was built with.
func buildVersion() (ver, rev, goVersion string) {
	ver, rev, goVersion = version, commit, runtime.Version()
	info, ok := debug.ReadBuildInfo()
	if ok {
		goVersion = info.GoVersion
		if ver == "" {
			ver = info.Main.Version
		}
		if rev == "" {
			modified := false
			for _, s := range info.Settings {
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

// runVersion implements "robotsproxy version" and "robotsproxy -version".
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", "Print the version, the commit and the Go version the binary was built with.", stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("version: unexpected arguments %q", fs.Args())
	}
	ver, rev, goVersion := buildVersion()
	fmt.Fprintf(stdout, "robotsproxy %s\ncommit %s\ngo %s\n", ver, rev, goVersion)
	return nil
}
