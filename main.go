// Command robotsproxy is a forward HTTP(S) proxy that makes crawlers obey
// robots.txt (RFC 9309). "robotsproxy -h" lists its commands; they live in
// internal/cli, and docs/cli.md is their reference.
package main

import (
	_ "embed"
	"os"

	"github.com/robotsproxy/robotsproxy/internal/build"
	"github.com/robotsproxy/robotsproxy/internal/cli"
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
var version, commit string

func main() {
	os.Exit(cli.Main(os.Args[1:], build.Info{File: versionFile, Version: version, Commit: commit}))
}
