// Package build says which build of robotsproxy is running: the version,
// the commit and the Go version, as "robotsproxy version" prints them and
// serve's "started" line records them.
package build

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what the binary was given at build time. The command (package
// main) fills it: File from the repository's VERSION file embedded with
// go:embed, Version and Commit from -ldflags "-X main.version=... -X
// main.commit=...".
type Info struct {
	File    string // the VERSION file's text; blank lines and spaces around it do not count
	Version string // set by -ldflags; overrides File when not empty
	Commit  string // set by -ldflags; overrides the VCS stamp when not empty
}

// Resolve returns the version (Version, else File, else "(devel)"), the
// commit (Commit, else the VCS stamp of the build information with
// "+dirty" appended for a modified tree, else "unknown", as with
// -buildvcs=false or a build outside a repository) and the Go version the
// binary was built with.
func (i Info) Resolve() (ver, rev, goVersion string) {
	ver, rev, goVersion = i.Version, i.Commit, runtime.Version()
	if ver == "" {
		ver = strings.TrimSpace(i.File)
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if rev == "" {
			rev = Revision(info.Settings)
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

// Revision is the vcs.revision build setting, "+dirty" appended when
// vcs.modified is true; "" when the build was not stamped.
func Revision(settings []debug.BuildSetting) string {
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
