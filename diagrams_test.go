package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// mermaidBlocks returns the bodies of the ```mermaid blocks of a Markdown
// text, in order, and an error for a block that is not closed.
func mermaidBlocks(text string) ([]string, error) {
	var out []string
	for {
		_, rest, ok := strings.Cut(text, "\n```mermaid\n")
		if !ok {
			return out, nil
		}
		block, after, ok := strings.Cut(rest, "\n```")
		if !ok {
			return out, fmt.Errorf("```mermaid block %d is not closed", len(out)+1)
		}
		out = append(out, block)
		text = after
	}
}

// pkgPath matches a word that names a package in a diagram: lower-case
// path segments, each ending in a slash ("policy/", "internal/access/").
var pkgPath = regexp.MustCompile(`^(?:[a-z][a-z0-9_]*/)+$`)

// diagramPackages returns the package paths (without the final slash) that
// a Mermaid block names, in order of appearance, each once.
func diagramPackages(block string) []string {
	block = strings.NewReplacer("<br/>", " ", "<br>", " ").Replace(block)
	words := strings.FieldsFunc(block, func(r rune) bool {
		return strings.ContainsRune(" \t\n\"'`[](){}<>|:;,", r)
	})
	var out []string
	seen := map[string]bool{}
	for _, w := range words {
		if pkgPath.MatchString(w) && !seen[w] {
			seen[w] = true
			out = append(out, strings.TrimSuffix(w, "/"))
		}
	}
	return out
}

var (
	nodeDef = regexp.MustCompile(`(\w+)\s*[\[\(\{]+"?([^"\]\)\}]*)"?[\]\)\}]+`)
	edge    = regexp.MustCompile(`^\s*(\w+)\s*-->\s*(\w+)\s*$`)
)

// importEdges returns the arrows "a --> b" of a flowchart block whose two
// ends are both package nodes (a node whose label, or its first line, is
// one package path), as pairs of package paths.
func importEdges(block string) [][2]string {
	label := map[string]string{}
	for _, m := range nodeDef.FindAllStringSubmatch(block, -1) {
		l, _, _ := strings.Cut(m[2], "<br/>") // a second line lists imports drawn elsewhere
		if l = strings.TrimSpace(l); pkgPath.MatchString(l) {
			label[m[1]] = strings.TrimSuffix(l, "/")
		}
	}
	var out [][2]string
	for _, line := range strings.Split(block, "\n") {
		m := edge.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a, aok := label[m[1]]
		b, bok := label[m[2]]
		if aok && bok {
			out = append(out, [2]string{a, b})
		}
	}
	return out
}

// isPackageDir reports whether dir (relative to the module root) holds Go
// files.
func isPackageDir(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(filepath.FromSlash(dir), "*.go"))
	return len(files) > 0
}

// importGraph returns, for each package of the module (by its path
// under the module, "." for main), the module's packages its non-test
// files import.
func importGraph() (map[string]map[string]bool, error) {
	fset := token.NewFileSet()
	out := map[string]map[string]bool{}
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
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(p, module+"/"); ok {
				out[pkg][dep] = true
			}
		}
		return nil
	})
	return out, err
}

// dependsOn reports whether package a imports b, directly or through
// other packages of the module.
func dependsOn(imports map[string]map[string]bool, a, b string) bool {
	seen := map[string]bool{}
	stack := []string{a}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for dep := range imports[p] {
			if dep == b {
				return true
			}
			if !seen[dep] {
				seen[dep] = true
				stack = append(stack, dep)
			}
		}
	}
	return false
}

// diagramPages gives the pages that draw the product, and how many Mermaid
// diagrams each has at least: the packages and a request's path, the
// decision steps, the CONNECT with and without interception, the fleet.
var diagramPages = map[string]int{
	"docs/development.md": 2,
	"docs/decisions.md":   1,
	"docs/https.md":       1,
	"docs/fleet.md":       1,
}

// checkDiagrams checks the Mermaid diagrams of the Markdown pages: every
// package a diagram names (a path ending in a slash, "internal/access/")
// is a directory of the module with Go files; every arrow of a flowchart
// from one package node to another is an import (direct or through other
// packages) that runs down layout_test.go's layers; and the diagrams of
// docs/development.md name every package of the module, so that the
// picture of the layout is complete, and its layout table has a row
// for each.
func checkDiagrams(t *testing.T, pages []string) {
	t.Helper()
	imports, err := importGraph()
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := mermaidBlocks(string(raw))
		if err != nil {
			t.Errorf("%s: %v", page, err)
		}
		if want := diagramPages[filepath.ToSlash(page)]; len(blocks) < want {
			t.Errorf("%s has %d Mermaid diagrams, want %d", page, len(blocks), want)
		}
		named := map[string]bool{}
		for i, block := range blocks {
			for _, pkg := range diagramPackages(block) {
				named[pkg] = true
				if !isPackageDir(pkg) {
					t.Errorf("%s: diagram %d names %s/, which is not a package of the module (no Go files in %s)", page, i+1, pkg, pkg)
				}
			}
			for _, e := range importEdges(block) {
				if !dependsOn(imports, e[0], e[1]) {
					t.Errorf("%s: diagram %d draws %s/ --> %s/, but %s does not import %s", page, i+1, e[0], e[1], e[0], e[1])
				}
				if ra, rb := layers[e[0]], layers[e[1]]; ra <= rb {
					t.Errorf("%s: diagram %d draws %s/ (layer %d) --> %s/ (layer %d): arrows run down the layers of layout_test.go", page, i+1, e[0], ra, e[1], rb)
				}
			}
		}
		if filepath.ToSlash(page) != "docs/development.md" {
			continue
		}
		checkPackageDiagram(t, page, string(raw), imports)
		var undrawn, untabled []string
		for pkg := range layers {
			if pkg == "." {
				continue
			}
			if !named[pkg] {
				undrawn = append(undrawn, pkg+"/")
			}
			if !strings.Contains(string(raw), "| `"+pkg+"/` |") {
				untabled = append(untabled, pkg+"/")
			}
		}
		sort.Strings(undrawn)
		sort.Strings(untabled)
		if len(undrawn) > 0 {
			t.Errorf("%s: the package diagram leaves out %s", page, strings.Join(undrawn, ", "))
		}
		if len(untabled) > 0 {
			t.Errorf("%s: the layout table has no row for %s", page, strings.Join(untabled, ", "))
		}
	}
}

// diagramBands split the package diagram into diagrams of at most
// maxBandNodes packages each, so that each can be read: a band is a run of
// layout_test.go's layers, from top down to bottom; together they hold
// every layer once, highest first.
var diagramBands = []struct {
	top, bottom int
	name        string
}{
	{9, 6, "the CLI, the server, the harnesses"},
	{5, 4, "the proxy and what the server assembles"},
	{3, 1, "policy and its sources"},
	{0, 0, "robots.txt, the audit line, guards, stores"},
	{-1, -1, "leaf rules and helpers"},
}

// maxBandNodes is how many packages one diagram of the package diagram
// draws at the most.
const maxBandNodes = 15

// packageDiagram draws the module's packages as Markdown: for each band of
// diagramBands a caption and a Mermaid flowchart with one subgraph per
// layer of layout_test.go, highest first, and an arrow for each import
// that no other arrow's path already implies (the transitive reduction of
// the non-test imports), so that the picture is complete and stays
// readable. An import of a package of a lower band is not an arrow: the
// importing package's box names it on a second line ("↓ policy/"). It
// fails when a layer is in no band or a band has more than maxBandNodes
// packages.
func packageDiagram(imports map[string]map[string]bool) (string, error) {
	id := func(p string) string {
		if p == "." {
			return "main"
		}
		return strings.ReplaceAll(p, "/", "_")
	}
	name := func(p string) string {
		if p == "." {
			return "robotsproxy (main)"
		}
		return p + "/"
	}
	band := func(p string) int {
		for i, b := range diagramBands {
			if r := layers[p]; r <= b.top && r >= b.bottom {
				return i
			}
		}
		return -1
	}
	type arrow struct{ from, to string }
	var arrows []arrow
	for from, deps := range imports {
		for to := range deps {
			implied := false
			for via := range deps {
				if via != to && dependsOn(imports, via, to) {
					implied = true
					break
				}
			}
			if !implied {
				arrows = append(arrows, arrow{from, to})
			}
		}
	}
	sort.Slice(arrows, func(i, j int) bool {
		a, c := arrows[i], arrows[j]
		if layers[a.from] != layers[c.from] {
			return layers[a.from] > layers[c.from]
		}
		if a.from != c.from {
			return a.from < c.from
		}
		return a.to < c.to
	})
	below := map[string][]string{}
	for _, a := range arrows {
		if band(a.from) != band(a.to) {
			below[a.from] = append(below[a.from], name(a.to))
		}
	}
	byLayer := map[int][]string{}
	for p, r := range layers {
		if band(p) < 0 {
			return "", fmt.Errorf("package %s/ is in layer %d, which no band of diagramBands holds", p, r)
		}
		byLayer[r] = append(byLayer[r], p)
	}
	var b strings.Builder
	for i, bd := range diagramBands {
		n := 0
		for r := bd.top; r >= bd.bottom; r-- {
			n += len(byLayer[r])
		}
		if n > maxBandNodes {
			return "", fmt.Errorf("layers %d to %d (%s) hold %d packages, more than the %d one diagram draws: split the band", bd.top, bd.bottom, bd.name, n, maxBandNodes)
		}
		if i > 0 {
			b.WriteString("\n")
		}
		span := fmt.Sprintf("Layers %d to %d", bd.top, bd.bottom)
		if bd.top == bd.bottom {
			span = fmt.Sprintf("Layer %d", bd.top)
		}
		fmt.Fprintf(&b, "**%s: %s** (%d packages)\n\n```mermaid\nflowchart TB\n", span, bd.name, n)
		for r := bd.top; r >= bd.bottom; r-- {
			ps := byLayer[r]
			if len(ps) == 0 {
				continue
			}
			sort.Strings(ps)
			sub := strconv.Itoa(r)
			if r < 0 {
				sub = "m" + strconv.Itoa(-r)
			}
			fmt.Fprintf(&b, "  subgraph L%s[\"layer %d\"]\n", sub, r)
			for _, p := range ps {
				label := name(p)
				if d := below[p]; len(d) > 0 {
					label += "<br/>↓ " + strings.Join(d, " ")
				}
				fmt.Fprintf(&b, "    %s[\"%s\"]\n", id(p), label)
			}
			b.WriteString("  end\n")
		}
		for _, a := range arrows {
			if band(a.from) == i && band(a.to) == i {
				fmt.Fprintf(&b, "  %s --> %s\n", id(a.from), id(a.to))
			}
		}
		b.WriteString("```\n")
	}
	return b.String(), nil
}

// The package diagram stands in docs/development.md between these two
// lines.
const (
	diagramStart = "<!-- the package diagram: packageDiagram (diagrams_test.go) draws it -->\n"
	diagramEnd   = "<!-- end of the package diagram -->\n"
)

// checkPackageDiagram checks that the package diagram of page (text), the
// part between diagramStart and diagramEnd, is packageDiagram: the
// packages and their imports as they are. With ROBOTSPROXY_UPDATE_DOCS=1 it
// writes the diagram into the page instead.
func checkPackageDiagram(t *testing.T, page, text string, imports map[string]map[string]bool) {
	t.Helper()
	want, err := packageDiagram(imports)
	if err != nil {
		t.Fatalf("the package diagram: %v", err)
	}
	before, rest, ok1 := strings.Cut(text, diagramStart)
	got, after, ok2 := strings.Cut(rest, diagramEnd)
	if !ok1 || !ok2 {
		t.Errorf("%s has no package diagram: the lines %q and %q around it", page, diagramStart, diagramEnd)
		return
	}
	if got == want {
		return
	}
	if os.Getenv("ROBOTSPROXY_UPDATE_DOCS") != "1" {
		t.Errorf("%s: the package diagram is not the packages and imports as they are: "+
			"ROBOTSPROXY_UPDATE_DOCS=1 go test -run TestDocs . redraws it", page)
		return
	}
	if err := os.WriteFile(page, []byte(before+diagramStart+want+diagramEnd+after), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: redrew the package diagram", page)
}
