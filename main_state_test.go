package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain points the default data directory (where serve creates its
// interception CA) at a temporary directory, for serve run in-process and
// for every binary the tests start: no test writes into the user's real
// ~/.local/state. At the end it removes what the tests shared
// (removeShared).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "robotsproxy-main-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	removeShared()
	os.Exit(code)
}
