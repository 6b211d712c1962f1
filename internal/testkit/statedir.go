package testkit

import (
	"fmt"
	"os"
	"testing"
)

// RunInStateDir runs the tests of m with XDG_STATE_HOME set to a new
// temporary directory, removed at the end, then runs cleanup; it returns
// m.Run's exit code, for a TestMain to exit with. serve's default data
// directory (where it creates its interception CA) is then there, for
// serve run in-process and for every binary the tests start: no test
// writes into the user's real ~/.local/state.
func RunInStateDir(m *testing.M, cleanup ...func()) int {
	dir, err := os.MkdirTemp("", "robotsproxy-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	for _, f := range cleanup {
		f()
	}
	return code
}
