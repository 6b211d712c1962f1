package outside_test

import (
	"os"
	"strings"
	"testing"
)

// TestModuleIsOutside: this module's path is not under robotsproxy's, so
// that the compiler refuses its internal packages here, as it does for
// any program outside the module: what the examples build, a stranger can.
func TestModuleIsOutside(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	path := strings.TrimSpace(strings.TrimPrefix(first, "module"))
	if path == "github.com/robotsproxy/robotsproxy" || strings.HasPrefix(path, "github.com/robotsproxy/robotsproxy/") {
		t.Errorf("module %s: a path under github.com/robotsproxy/robotsproxy may import its internal packages; the examples must not", path)
	}
}
