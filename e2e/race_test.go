//go:build race

package e2e

// Under "go test -race" the binary is built with the race detector too, so
// that a data race in the proxy fails the run (a raced binary exits 66).
func init() { buildFlags = append(buildFlags, "-race") }
