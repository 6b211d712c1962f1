package server

import (
	"fmt"
	"os"
	"testing"
)

// TestMain points the default data directory (where serve creates its
// interception CA) at a temporary directory: no test writes into the
// user's real ~/.local/state.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "robotsproxy-server-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "server tests:", err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
