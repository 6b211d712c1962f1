package cli

import (
	"os"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// TestMain runs the tests with serve's default data directory in a
// temporary directory (testkit.RunInStateDir): serve runs in-process here.
func TestMain(m *testing.M) {
	os.Exit(testkit.RunInStateDir(m))
}
