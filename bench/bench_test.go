// Package bench compares the robots package of robotsproxy with
// github.com/temoto/robotstxt on the same workloads: real robots.txt files
// from the shared corpus, the same request paths, the same product token.
//
// It is a separate module so that the root module never depends on the
// library it is compared with. Every benchmark has sub-benchmarks named
// file=<workload>/lib=<library>, so that
//
//	benchstat -col /lib bench.txt
//
// puts the two libraries side by side. See README.md for how to run it and
// for the results measured so far.
//
// Caveat on the large files: robotsproxy parses at most the first 512 KiB
// of a body, as RFC 9309 2.5 allows (robots.DefaultMaxBytes), while temoto
// parses all of it. For environment.sa.gov.au.txt (file=largest, 1.8 MiB)
// and boe.es.txt (file=wildcard, 0.8 MiB) the two libraries therefore do
// not do the same work; the workloads file=largest-cut512k and
// file=wildcard-cut512k feed both libraries the same 512 KiB prefix, for an
// even comparison.
package bench

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
	"github.com/temoto/robotstxt"
)

// agent is the product token every match is made for.
const agent = "Googlebot"

// wildcardFile is the wildcard-heavy workload: 0.8 MiB, 16,671 Disallow
// lines, with "*" and "$".
const wildcardFile = "boe.es.txt"

// numPaths is the size of each workload's list of request paths; a power
// of two, so that the match loops index it cheaply.
const numPaths = 64

// Sinks keep the compiler from discarding the results being measured.
var (
	sinkBool    bool
	sinkRobots  *robots.Robots
	sinkTemoto  *robotstxt.RobotsData
	sinkVerdict robots.Verdict
)

// workload is one robots.txt body and the request paths tested against it.
type workload struct {
	// name is the value of the file= key in benchmark names.
	name string
	// file is the corpus file name, e.g. "rvb.ru.txt".
	file string
	body []byte
	// raw are the request paths (path and query) as derived from the
	// file's rules, before normalisation.
	raw []string
	// paths are raw normalised with robots.NormalizePath, so that
	// robotsproxy's Test does not allocate. Both libraries are benchmarked
	// on these same strings.
	paths []string
}

// corpusDir is the real-world corpus (robots/ and agents/ folders): the
// larger one at $ROBOTSPROXY_CORPUS, or the repository's testdata.
func corpusDir() string {
	if d := os.Getenv("ROBOTSPROXY_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "testdata")
}

var loadWorkloads = sync.OnceValues(func() ([]workload, error) {
	dir := filepath.Join(corpusDir(), "robots")
	files, err := corpusFiles(dir)
	if err != nil {
		return nil, err
	}
	small, median, largest, err := pickFiles(files)
	if err != nil {
		return nil, err
	}
	picks := []struct{ name, file string }{
		{"small", small.name},
		{"median", median.name},
		{"largest", largest.name},
		{"wildcard", wildcardFile},
	}
	var ws []workload
	for _, p := range picks {
		body, err := os.ReadFile(filepath.Join(dir, p.file))
		if err != nil {
			return nil, err
		}
		raw := rawPaths(body)
		ws = append(ws, workload{name: p.name, file: p.file, body: body, raw: raw, paths: normalized(raw)})
		// RFC 9309 2.5: robotsproxy parses only a prefix of a long body.
		// The -cut512k workload gives both libraries that same prefix, cut
		// where robotsproxy cuts it, so that they do the same work.
		if size := robots.Parse(body).Size; size < len(body) {
			cut := body[:size]
			raw := rawPaths(cut)
			ws = append(ws, workload{
				name: p.name + "-cut512k", file: p.file + " (first 512 KiB)",
				body: cut, raw: raw, paths: normalized(raw),
			})
		}
	}
	return ws, nil
})

// workloads returns the workloads, or skips tb when the corpus is absent.
func workloads(tb testing.TB) []workload {
	tb.Helper()
	ws, err := loadWorkloads()
	if err != nil {
		tb.Fatalf("cannot read the corpus (testdata/robots ships with the repository; ROBOTSPROXY_CORPUS overrides it): %v", err)
	}
	return ws
}

type corpusFile struct {
	name string
	size int64
}

// corpusFiles lists the files of dir sorted by size, then name.
func corpusFiles(dir string) ([]corpusFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []corpusFile
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		files = append(files, corpusFile{e.Name(), info.Size()})
	}
	slices.SortFunc(files, func(a, b corpusFile) int {
		return cmp.Or(cmp.Compare(a.size, b.size), strings.Compare(a.name, b.name))
	})
	return files, nil
}

// pickFiles chooses the workload files deterministically from files sorted
// by (size, name): small is the middle one of the files of 200 to 500 bytes,
// median is the middle one of all files, largest is the last.
func pickFiles(files []corpusFile) (small, median, largest corpusFile, err error) {
	if len(files) == 0 {
		return small, median, largest, fmt.Errorf("no .txt files")
	}
	var band []corpusFile
	for _, f := range files {
		if 200 <= f.size && f.size <= 500 {
			band = append(band, f)
		}
	}
	if len(band) == 0 {
		return small, median, largest, fmt.Errorf("no file of 200 to 500 bytes")
	}
	return band[len(band)/2], files[len(files)/2], files[len(files)-1], nil
}

// ruleValues returns the distinct values of the allow and disallow lines of
// body, in file order. It is a deliberately simple scan, independent of both
// libraries.
func ruleValues(body []byte) []string {
	seen := map[string]bool{}
	var vals []string
	for line := range strings.Lines(strings.ReplaceAll(string(body), "\r", "\n")) {
		line, _, _ = strings.Cut(line, "#")
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		if (key != "allow" && key != "disallow") || val == "" || seen[val] {
			continue
		}
		seen[val] = true
		vals = append(vals, val)
	}
	return vals
}

// suffixes are appended to paths derived from rules.
var suffixes = []string{
	"", "/", "index.html", "/page/2", "?id=42", "x/y/z.php?a=b&c=d",
	"-old/archive.html", "/2024/05/17/a-long-article-slug-for-testing",
}

// normalized returns the paths normalised with robots.NormalizePath, as a
// proxy would see them on the wire: "$" becomes "%24", non-ASCII octets are
// percent-encoded, and so on (RFC 9309 2.2.2).
func normalized(raw []string) []string {
	paths := make([]string, len(raw))
	for i, p := range raw {
		paths[i] = robots.NormalizePath(p)
	}
	return paths
}

// rawPaths returns numPaths request paths for body (see derivePaths).
func rawPaths(body []byte) []string { return derivePaths(body, numPaths) }

// derivePaths returns n request paths for body (n at least 8):
//
//   - "/" and three common paths;
//   - four pseudo-random paths (fixed seed), which rarely match anything;
//   - the rest derived from rules sampled evenly over the file. Even ones
//     take the rule's literal prefix, up to the first "*" or the final "$",
//     plus a suffix; odd ones take the rule with its "*" dropped (and, if it
//     ends with "$", exactly that, otherwise plus a suffix), which exercises
//     the wildcard segments. A "$" that is not last is kept as a literal
//     character, as RFC 9309 matchers read it.
func derivePaths(body []byte, n int) []string {
	paths := []string{"/", "/index.html", "/search?q=robots+txt", "/wp-admin/admin-ajax.php"}
	rng := rand.New(rand.NewPCG(9309, 2022))
	const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	for range 4 {
		var sb strings.Builder
		for range 1 + rng.IntN(4) {
			sb.WriteByte('/')
			for range 3 + rng.IntN(10) {
				sb.WriteByte(alnum[rng.IntN(len(alnum))])
			}
		}
		paths = append(paths, sb.String())
	}
	vals := ruleValues(body)
	if len(vals) == 0 {
		vals = []string{"/"}
	}
	n -= len(paths)
	for j := range n {
		v := vals[j*len(vals)/n]
		anchored := strings.HasSuffix(v, "$")
		v = strings.TrimSuffix(v, "$")
		var p string
		if j%2 == 0 {
			p, _, _ = strings.Cut(v, "*")
			p += suffixes[(j/2)%len(suffixes)]
		} else {
			p = strings.ReplaceAll(v, "*", "")
			if !anchored {
				p += suffixes[(j/2)%len(suffixes)]
			}
		}
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		paths = append(paths, p)
	}
	return paths
}

// parseTemoto parses body with temoto, failing b if temoto rejects it.
func parseTemoto(tb testing.TB, body []byte) *robotstxt.RobotsData {
	tb.Helper()
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		tb.Fatalf("temoto cannot parse the workload: %v", err)
	}
	return data
}

// BenchmarkMatch measures one decision per iteration: a path from the
// workload's list, for agent, against a file parsed once beforehand. Both
// libraries look up the agent's group on every call: robotsproxy's Test does
// it internally, and temoto's FindGroup is called in the loop for the same
// reason.
func BenchmarkMatch(b *testing.B) {
	for _, w := range workloads(b) {
		b.Run("file="+w.name, func(b *testing.B) {
			b.Run("lib=robotsproxy", func(b *testing.B) {
				r := robots.Parse(w.body)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					sinkBool = r.Test(w.paths[i%numPaths], agent).Allowed
					i++
				}
			})
			b.Run("lib=temoto", func(b *testing.B) {
				data := parseTemoto(b, w.body)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					sinkBool = data.FindGroup(agent).Test(w.paths[i%numPaths])
					i++
				}
			})
		})
	}
}

// BenchmarkParse measures compiling the whole body once per iteration.
// MB/s is computed from the full body length for both libraries, although
// robotsproxy reads at most 512 KiB of it (see the -cut512k workloads).
func BenchmarkParse(b *testing.B) {
	for _, w := range workloads(b) {
		b.Run("file="+w.name, func(b *testing.B) {
			b.Run("lib=robotsproxy", func(b *testing.B) {
				b.SetBytes(int64(len(w.body)))
				b.ReportAllocs()
				for b.Loop() {
					sinkRobots = robots.Parse(w.body)
				}
			})
			b.Run("lib=temoto", func(b *testing.B) {
				parseTemoto(b, w.body)
				b.SetBytes(int64(len(w.body)))
				b.ReportAllocs()
				for b.Loop() {
					sinkTemoto, _ = robotstxt.FromBytes(w.body)
				}
			})
		})
	}
}

// retainedCopies is how many compiled copies of a body BenchmarkRetained
// keeps: about 8 MiB of input, between 4 and 1000 copies.
func retainedCopies(size int) int {
	return min(max((8<<20)/max(size, 1), 4), 1000)
}

// retained returns the heap bytes still live per compiled copy after
// parsing n copies and collecting garbage.
func retained(n int, parse func() any) float64 {
	keep := make([]any, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = parse()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// reportRetained reports a retained measurement, and suppresses ns/op,
// which an empty loop makes meaningless.
func reportRetained(b *testing.B, perFile float64, fileSize int) {
	b.ReportMetric(perFile, "retained-B/file")
	b.ReportMetric(float64(fileSize), "file-B")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRetained reports the heap a compiled file keeps alive, as the
// custom metric retained-B/file, next to the file size as file-B. The
// measurement runs once per invocation, before an empty timed loop.
func BenchmarkRetained(b *testing.B) {
	for _, w := range workloads(b) {
		n := retainedCopies(len(w.body))
		b.Run("file="+w.name, func(b *testing.B) {
			b.Run("lib=robotsproxy", func(b *testing.B) {
				per := retained(n, func() any { return robots.Parse(w.body) })
				for b.Loop() {
				}
				reportRetained(b, per, len(w.body))
			})
			b.Run("lib=temoto", func(b *testing.B) {
				parseTemoto(b, w.body)
				per := retained(n, func() any { d, _ := robotstxt.FromBytes(w.body); return d })
				for b.Loop() {
				}
				reportRetained(b, per, len(w.body))
			})
		})
	}
}

// worstCase is a pathological wildcard rule and a long path it does not
// match: a backtracking matcher would take exponential time here.
func worstCase() (body []byte, path string) {
	body = []byte("User-agent: *\nDisallow: /" + strings.Repeat("*a", 20) + "*b\n")
	return body, "/" + strings.Repeat("a", 5000)
}

// BenchmarkWorstCase matches worstCase's path against its rule.
func BenchmarkWorstCase(b *testing.B) {
	body, path := worstCase()
	b.Run("lib=robotsproxy", func(b *testing.B) {
		r := robots.Parse(body)
		b.ReportAllocs()
		for b.Loop() {
			sinkVerdict = r.Test(path, agent)
		}
	})
	b.Run("lib=temoto", func(b *testing.B) {
		data := parseTemoto(b, body)
		b.ReportAllocs()
		for b.Loop() {
			sinkBool = data.FindGroup(agent).Test(path)
		}
	})
}

// TestWorkloads logs the files picked and checks the shape of each path
// list.
func TestWorkloads(t *testing.T) {
	for _, w := range workloads(t) {
		t.Logf("file=%-16s %-42s %8d bytes, %d distinct rule values", w.name, w.file, len(w.body), len(ruleValues(w.body)))
		if len(w.paths) != numPaths {
			t.Errorf("%s: got %d paths, want %d", w.name, len(w.paths), numPaths)
		}
		r := robots.Parse(w.body)
		for _, p := range w.paths {
			if got := testing.AllocsPerRun(10, func() { sinkVerdict = r.Test(p, agent) }); got != 0 {
				t.Errorf("%s: Test(%q) allocates %v times, want 0", w.name, p, got)
			}
		}
	}
	body, path := worstCase()
	if v := robots.Parse(body).Test(path, agent); !v.Allowed {
		t.Errorf("worst case: got disallowed by %v, want allowed", v.Rule)
	}
	if !parseTemoto(t, body).FindGroup(agent).Test(path) {
		t.Errorf("worst case: temoto got disallowed, want allowed")
	}
}

// TestAgreement compares the two libraries' decisions on the match
// workloads. temoto does not implement RFC 9309 exactly, so disagreements
// are counted and logged, never failed on.
//
// temoto is asked twice: with the normalised paths the benchmarks use, and
// with the raw paths (temoto does no percent-encoding normalisation of its
// own). A disagreement on the normalised path is put down to the parse
// limit when robotsproxy without the limit (Options.MaxBytes = the body
// length) agrees with temoto.
func TestAgreement(t *testing.T) {
	const examples = 3
	var total, differ, differRaw, limit int
	for _, w := range workloads(t) {
		r := robots.Parse(w.body)
		full := robots.Options{MaxBytes: len(w.body)}.Parse(w.body)
		g := parseTemoto(t, w.body).FindGroup(agent)
		var n, nRaw, nLimit int
		for i, p := range w.paths {
			v := r.Test(p, agent)
			if g.Test(w.raw[i]) != v.Allowed {
				nRaw++
			}
			tm := g.Test(p)
			if v.Allowed == tm {
				continue
			}
			n++
			if full.Test(p, agent).Allowed == tm {
				nLimit++
				continue
			}
			if n-nLimit <= examples {
				rule := "no rule"
				if v.Matched() {
					rule = fmt.Sprintf("line %d %q", v.Rule.Line, v.Rule.Text())
				}
				t.Logf("file=%s path %q: robotsproxy allowed=%v (%s, agent %q), temoto allowed=%v",
					w.name, p, v.Allowed, rule, v.Agent, tm)
			}
		}
		t.Logf("file=%s: %d of %d decisions disagree (%d of them because of the 512 KiB limit); with raw paths for temoto: %d",
			w.name, n, len(w.paths), nLimit, nRaw)
		total += len(w.paths)
		differ += n
		differRaw += nRaw
		limit += nLimit
	}
	t.Logf("all match workloads: %d of %d decisions disagree (%d because of the 512 KiB limit); with raw paths for temoto: %d",
		differ, total, limit, differRaw)
}
