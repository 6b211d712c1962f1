package main

import (
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// decidersOnly are the packages whose decisions are policy's: the proxy
// renders what policy decides, so it imports none of them (policy takes
// them as its Options' interfaces, and internal/server plugs them in).
var decidersOnly = []string{
	"internal/access",     // robots.txt results: policy.Cache
	"internal/identity",   // who is asking: policy.Identifier, policy.Pinner
	"internal/politeness", // admission: policy.Politeness, policy.Ticket
	"internal/license",    // RSL licenses: policy.Licenses
	"internal/usage",      // usage preferences: policy's own
}

// TestProxyRendersOnly fails when package proxy imports a package whose
// decisions are policy's (decidersOnly).
func TestProxyRendersOnly(t *testing.T) {
	deps := moduleImports(t, "proxy")
	slices.Sort(deps)
	for _, dep := range slices.Compact(deps) {
		if slices.Contains(decidersOnly, dep) {
			t.Errorf("proxy imports %q: the proxy renders and acts on policy's Decision; what %s decides belongs behind policy (a policy step, or an interface of policy.Options)", dep, dep)
		}
	}
}

// otherAPIPackages are the packages outside the standard library and this
// module whose types the public packages' exported API may name: goproxy
// (the proxy is goproxy wiring), and the logger and metrics registry a
// caller passes in.
var otherAPIPackages = map[string]string{
	"github.com/elazarl/goproxy":                     "the proxy is goproxy wiring (Options.Intercept)",
	"github.com/prometheus/client_golang/prometheus": "the registry the proxy's metrics go to (NewMetrics)",
	"github.com/rs/zerolog":                          "the logger enforce writes operational messages to",
}

// TestPublicAPINamesPublicTypes reads the exported API of every public
// package (its export data, so aliases, embedded fields and methods are
// seen as the compiler sees them) and fails on every type it names that a
// program outside the module cannot name: a type of an internal package,
// or of a package outside the standard library, this module's public
// packages and otherAPIPackages.
func TestPublicAPINamesPublicTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the export data of the public packages")
	}
	var pkgs []string
	for p := range public {
		if p != "." {
			pkgs = append(pkgs, module+"/"+p)
		}
	}
	slices.Sort(pkgs)
	exports := exportData(t, pkgs)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	for _, path := range pkgs {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		for _, v := range apiViolations(pkg) {
			t.Errorf("%s: names %s, which a program outside the module cannot use: take a public interface or options of the package's own, or move the type into a public package", v.where, v.what)
		}
	}
}

// exportData returns the export data file of each package pkgs depend on,
// by import path, as go list -export builds it.
func exportData(t *testing.T, pkgs []string) map[string]string {
	t.Helper()
	var out, stderr bytes.Buffer
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, pkgs...)...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			m[path] = file
		}
	}
	return m
}

// violation is one type of a package's API that outsiders cannot name.
type violation struct{ where, what string }

// apiViolations walks the exported objects of pkg, the fields and
// methods of its exported types, and the types they name.
func apiViolations(pkg *types.Package) []violation {
	w := apiWalker{pkg: pkg, seen: map[types.Type]bool{}}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		where := pkg.Name() + "." + name
		switch o := obj.(type) {
		case *types.TypeName:
			w.typ(where, o.Type())
			if named, ok := types.Unalias(o.Type()).(*types.Named); ok && named.Obj().Pkg() == pkg {
				for i := range named.NumMethods() {
					if m := named.Method(i); m.Exported() {
						w.typ(where+"."+m.Name(), m.Type())
					}
				}
			}
		default:
			w.typ(where, obj.Type())
		}
	}
	return w.out
}

type apiWalker struct {
	pkg  *types.Package
	seen map[types.Type]bool
	out  []violation
}

// typ checks the type t, named at where, and what it is made of.
func (w *apiWalker) typ(where string, t types.Type) {
	if alias, ok := t.(*types.Alias); ok {
		w.check(where, alias.Obj())
		t = types.Unalias(t)
	}
	if w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		w.check(where, t.Obj())
		for i := range t.TypeArgs().Len() {
			w.typ(where, t.TypeArgs().At(i))
		}
		if t.Obj().Pkg() == w.pkg { // the package's own: what it is made of is its API too
			w.typ(w.pkg.Name()+"."+t.Obj().Name(), t.Underlying())
		}
	case *types.Pointer:
		w.typ(where, t.Elem())
	case *types.Slice:
		w.typ(where, t.Elem())
	case *types.Array:
		w.typ(where, t.Elem())
	case *types.Map:
		w.typ(where, t.Key())
		w.typ(where, t.Elem())
	case *types.Chan:
		w.typ(where, t.Elem())
	case *types.Signature:
		for _, tuple := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tuple.Len() {
				w.typ(where, tuple.At(i).Type())
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				w.typ(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			w.typ(where+"."+t.Method(i).Name(), t.Method(i).Type())
		}
	}
}

// check records a violation when obj is a type outsiders cannot name.
func (w *apiWalker) check(where string, obj *types.TypeName) {
	if obj.Pkg() == nil { // a predeclared type: error, any, ...
		return
	}
	path := obj.Pkg().Path()
	switch rel, ours := strings.CutPrefix(path, module+"/"); {
	case path == module:
	case ours:
		if public[rel] && !strings.Contains(rel, "internal") {
			return
		}
	case !strings.Contains(strings.SplitN(path, "/", 2)[0], "."): // the standard library
		return
	case otherAPIPackages[path] != "":
		return
	}
	w.out = append(w.out, violation{where, path + "." + obj.Name()})
}
