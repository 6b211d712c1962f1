package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// smokescreenVersion is the smokescreen release compared with.
const smokescreenVersion = "v0.1.0"

// binaries are the programs proxybench runs.
type binaries struct {
	robotsproxy, bare, smokescreen, squid string
	before                                string // -before, "" when not given
}

// buildBinaries builds robotsproxy (from the module this one replaces it
// with, with that module's own dependencies), bare goproxy (this
// module's proxybench/bare) and smokescreen (go install of its release,
// kept in the user's cache between runs), all as the Dockerfile builds
// robotsproxy: CGO_ENABLED=0. It finds squid on PATH or in /usr/sbin.
// A proxy that cannot be had is left "" when it is not in want.
func buildBinaries(dir string, want map[string]bool) (binaries, error) {
	var b binaries
	goEnv := append(os.Environ(), "CGO_ENABLED=0")
	run := func(dir string, env []string, args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/robotsproxy/robotsproxy").Output()
	if err != nil {
		return b, fmt.Errorf("find the robotsproxy module (run proxybench from the bench module): %w", err)
	}
	b.robotsproxy = filepath.Join(dir, "robotsproxy")
	if err := run(strings.TrimSpace(string(root)), goEnv, "build", "-o", b.robotsproxy, "."); err != nil {
		return b, err
	}
	b.bare = filepath.Join(dir, "bare")
	if err := run(".", goEnv, "build", "-o", b.bare, "./proxybench/bare"); err != nil {
		return b, err
	}
	if want[kindSmokescreen] {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		gobin := filepath.Join(cache, "robotsproxy-proxybench", "smokescreen-"+smokescreenVersion)
		b.smokescreen = filepath.Join(gobin, "smokescreen")
		if _, err := os.Stat(b.smokescreen); err != nil {
			env := append(goEnv, "GOBIN="+gobin, "GOFLAGS=-buildvcs=false")
			if err := run(os.TempDir(), env, "install", "github.com/stripe/smokescreen@"+smokescreenVersion); err != nil {
				return b, fmt.Errorf("smokescreen (leave it out with -proxies): %w", err)
			}
		}
	}
	if want[kindSquid] {
		b.squid, err = exec.LookPath("squid")
		if err != nil {
			if _, serr := os.Stat("/usr/sbin/squid"); serr != nil {
				return b, fmt.Errorf("squid is not installed (apt-get install squid, or leave it out with -proxies)")
			}
			b.squid = "/usr/sbin/squid"
		}
	}
	return b, nil
}
