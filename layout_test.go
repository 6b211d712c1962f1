package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layers ranks the module's packages: a package imports only packages of
// a lower layer, so that imports run one way, main -> server -> proxy ->
// policy -> (access, identity) -> robots. A new package must be placed
// here.
var layers = map[string]int{
	"robots":              0,
	"netguard":            0,
	"mitm":                1, // caches certificates in internal/memo
	"politeness":          0,
	"auditlog":            0,
	"audit/report":        5, // reads lines through auditlog, checks the chain with audit, keys sites as policy does
	"deploy":              0,
	"internal/redistest":  0,
	"internal/keyfile":    0,
	"internal/memo":       0,
	"egress":              0, // the forwarded request's identity and record
	"payments":            1, // pay per crawl: the paying egress step and its ledger
	"payments/paytest":    2, // a pay per crawl origin for tests
	"signing":             1, // Web Bot Auth signatures, an egress step (imports egress)
	"access":              1,
	"identity":            1,
	"usage":               1,
	"fleet":               2, // shares access results
	"license":             2, // RSL licenses: fetched by access, decided for usage's purposes
	"policy":              3,
	"check":               4,
	"audit":               4,
	"config":              4, // validation and defaults only
	"audit/report/loggen": 5,
	"proxy":               5,
	"proxy/cpubench":      6,
	"server":              6,
	".":                   7, // main
	"e2e":                 7,
	"enforce":             7, // the proxy's request path in a Go crawler's process (assembled by server)
}

const module = "github.com/robotsproxy/robotsproxy"

// TestImportsRunOneWay parses every non-test Go file of the module (bench/
// and crawlers/ are modules of their own) and checks that no package imports one of its
// own layer or above it.
func TestImportsRunOneWay(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || isModule(path)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		rank, ok := layers[pkg]
		if !ok {
			if !seen[pkg] {
				t.Errorf("package %q has no layer: place it in layers", pkg)
			}
			seen[pkg] = true
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(p, module+"/")
			if !ok {
				continue
			}
			if r, ok := layers[dep]; !ok || r >= rank {
				t.Errorf("%s: package %q (layer %d) imports %q (layer %d, known %v): imports must run one way", path, pkg, rank, dep, r, ok)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("go.mod"); err != nil {
		t.Fatalf("run from the module root: %v", err)
	}
}

// isModule reports whether the directory dir holds a Go module of its own
// (a go.mod): its packages are not the module's.
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}
