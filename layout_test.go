package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layers ranks the module's packages: a package imports only packages of
// a lower layer, so that imports run one way, main -> server -> proxy ->
// policy -> (access, identity) -> robots. A new package must be placed
// here.
var layers = map[string]int{
	"internal/build":                   -1, // the version, the commit and the Go version of the running binary
	"internal/csvcell":                 -1, // the CSV outputs' one cell rule (spreadsheet formulas)
	"internal/suggest":                 -1, // the "did you mean" of errors: the edit distance to a known name
	"internal/heapsize":                -1, // the allocator's sizes, for robots' and the caches' accounting
	"internal/rules":                   -1, // rules the configuration and the runtime both apply: modes, purposes, host entries, defaults
	"internal/money":                   -1, // pay per crawl's exact amounts and currency codes
	"internal/chart":                   -1, // the HTML reports' stacked bar charts: SVG through html/template
	"internal/fleet/redisurl":          -1, // a shared.redis_url: checked, redacted, opened
	"internal/testkit":                 -1, // helpers for tests only: clock, origins, echo server, audit lines
	"robots":                           0,
	"internal/netguard":                0,
	"internal/mitm":                    1, // caches certificates in internal/memo
	"internal/politeness":              3, // spaces and pauses requests: policy.Politeness, policy.Ticket
	"auditlog":                         0,
	"internal/audit/report":            6, // reads lines through auditlog, checks the chain with audit/verify, keys sites as policy does
	"internal/audit/site":              4, // where a line's request went, and the site a user types, as policy keys it
	"internal/live":                    5, // the live view: the ring the audit writer fills, its stream and page; watch's client
	"internal/redistest":               0,
	"internal/keyfile":                 0,
	"internal/dnstest":                 0, // a local DNS server for tests
	"internal/memo":                    0,
	"internal/egress":                  0, // the forwarded request's identity and record
	"internal/egress/payments":         1, // pay per crawl: the paying egress step and its ledger
	"internal/egress/payments/paytest": 2, // a pay per crawl origin for tests
	"internal/egress/signing":          1, // Web Bot Auth signatures, an egress step (imports egress)
	"internal/access":                  3, // fetches and caches robots.txt: policy.Access, for policy.Cache
	"internal/access/accesstest":       4, // a Fetcher and a Policy on real access, for access's and policy's tests
	"internal/identity/catalogue":      1, // the crawler catalogue: built from upstream lists, embedded, matched (reads robots' name rule)
	"internal/identity/catalogue/gen":  2, // the command that rebuilds the catalogue (go generate)
	"internal/identity/upstream":       0, // the upstream lists' MANIFEST.tsv rows and their refresh, for both generators
	"internal/identity/uaparser":       1, // ua-parser's data (uap-core's families), built from upstream, embedded, run by uap-go
	"internal/identity/uaparser/gen":   2, // the command that rebuilds ua-parser's data (go generate)
	"internal/identity":                3, // User-Agents and pins, in policy's terms (policy.Identity, policy.Pin)
	"internal/fleet":                   4, // shares access results
	"internal/license":                 4, // RSL licenses: fetched by access, decided for usage's purposes
	"internal/ipranges":                4, // crawler operators' published IP ranges: fetched by access, stored in the data directory
	"policy":                           2, // the decision and its terms: identities, access results, usage; takes its sources as interfaces
	"internal/check":                   5,
	"internal/audit":                   4, // the runtime writer: file, chain, checkpoints, robots.txt archive
	"internal/audit/verify":            5, // the offline verifier: re-decides lines through policy
	"internal/audit/audittest":         5, // fixtures the archive's, the verifier's and the audit commands' tests share
	"internal/accesslog":               5, // judges web server access logs through policy; reads the audit archive
	"internal/config":                  4, // the schema: defaults and validation only (TestConfigIsSchema)
	"internal/audit/report/loggen":     5,
	"proxy":                            5,
	"internal/cpubench":                6,
	"internal/server":                  6,
	"internal/cli/command":             7, // the commands, one a file, and what they share: the flag rule, exit codes, output
	"internal/cli":                     8, // the dispatcher: runs the command named, help, exit codes, signals
	".":                                9, // main: hands the command line to internal/cli
	"e2e":                              7,
	"enforce":                          7, // the proxy's request path in a Go crawler's process (assembled by server)
}

// importedOnlyBy names the one package that may import a package: the
// CLI's dispatcher is main's alone, so that no command calls back into it.
var importedOnlyBy = map[string]string{
	"internal/cli": ".",
}

const module = "github.com/robotsproxy/robotsproxy"

// public lists the packages that programs outside the module may import:
// the RFC 9309 library, the audit line's schema and scanner, the proxy and
// its decider (the design's named packages), and the in-process transport
// for Go crawlers. Every other package with code lives under internal/,
// where it can change without breaking anyone; packages of tests only
// (deploy, e2e) have nothing to import.
var public = map[string]bool{
	"robots":   true,
	"auditlog": true,
	"policy":   true,
	"proxy":    true,
	"enforce":  true,
	".":        true, // package main: a command, not importable
}

// TestPublicSurface fails when a package outside public has code that a
// program outside the module could import: it must move under internal/.
func TestPublicSurface(t *testing.T) {
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bench" ||
				d.Name() == "node_modules" || path == "internal") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // a module of its own (bench/, an example module)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if !public[pkg] && !seen[pkg] {
			seen[pkg] = true
			t.Errorf("package %q is importable from outside the module but is not public: move it under internal/, or add it to public if it is meant", pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

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
			if only, ok := importedOnlyBy[dep]; ok && only != pkg {
				t.Errorf("%s: package %q imports %q, which only %q may import", path, pkg, dep, only)
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

// schemaDeps are the only packages of the module that internal/config may
// depend on, directly or not: the rule packages it shares with the
// runtime. config is the schema, its defaults and its validation; the
// server maps it to the runtime packages' options (internal/server,
// options.go), so no runtime package (policy, identity, fleet, egress,
// ...) is among its dependencies.
var schemaDeps = map[string]bool{
	"robots":                  true, // product tokens (RFC 9309 2.2.1), the parsing limit
	"internal/heapsize":       true, // robots'
	"internal/rules":          true,
	"internal/suggest":        true, // the nearest known key of an error
	"internal/money":          true,
	"internal/fleet/redisurl": true,
}

// TestConfigIsSchema fails when internal/config depends, directly or
// through another package, on a package of the module outside schemaDeps.
func TestConfigIsSchema(t *testing.T) {
	deps := map[string]bool{}
	var walk func(pkg string)
	walk = func(pkg string) {
		for _, dep := range moduleImports(t, pkg) {
			if !deps[dep] {
				deps[dep] = true
				walk(dep)
			}
		}
	}
	walk("internal/config")
	for _, dep := range slices.Sorted(maps.Keys(deps)) {
		if !schemaDeps[dep] {
			t.Errorf("internal/config depends on %q, which is not a rule package: map the configuration to it in internal/server, or move the rule it needs down into a package of schemaDeps", dep)
		}
	}
}

// moduleImports returns the packages of the module that the non-test Go
// files of pkg (a directory relative to the module root) import.
func moduleImports(t *testing.T, pkg string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(filepath.FromSlash(pkg), "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("package %q: no Go files (%v)", pkg, err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(p, module+"/"); ok {
				out = append(out, dep)
			}
		}
	}
	return out
}

// isModule reports whether the directory dir holds a Go module of its own
// (a go.mod): its packages are not the module's.
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}
