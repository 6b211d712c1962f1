package robots_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/robotsproxy/robotsproxy/robots"
)

// benchFiles picks real corpus files: the smallest above 200 octets, the
// median, the largest, and the file with the most lines that are not UTF-8
// ("bridged", see Options.Charset).
func benchFiles(b *testing.B) map[string][]byte {
	dir := filepath.Join(corpusDir(), "robots")
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatalf("cannot read %s (testdata/robots ships with the repository; ROBOTSPROXY_CORPUS overrides it): %v", dir, err)
	}
	type file struct {
		name string
		size int64
	}
	var files []file
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			files = append(files, file{e.Name(), info.Size()})
		}
	}
	sort.Slice(files, func(i, j int) bool {
		return files[i].size < files[j].size || files[i].size == files[j].size && files[i].name < files[j].name
	})
	small := sort.Search(len(files), func(i int) bool { return files[i].size >= 200 })
	picks := map[string]string{"small": files[small].name, "median": files[len(files)/2].name, "largest": files[len(files)-1].name}
	out := map[string][]byte{}
	for label, name := range picks {
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		out[label] = body
	}
	most := 0
	for _, f := range files {
		body, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil || utf8.Valid(body) {
			continue
		}
		bad := 0
		for _, line := range bytes.Split(body, []byte("\n")) {
			if !utf8.Valid(line) {
				bad++
			}
		}
		if bad > most {
			most, out["bridged"] = bad, body
		}
	}
	return out
}

var benchOrder = []string{"small", "median", "largest", "bridged"}

// BenchmarkMatch measures one match of a path against a compiled file,
// agent lookup included: ns and allocations per match.
func BenchmarkMatch(b *testing.B) {
	files := benchFiles(b)
	for _, label := range benchOrder {
		r := robots.Parse(files[label])
		paths := derivePaths(r)
		for i, p := range paths {
			paths[i] = robots.NormalizePath(p)
		}
		b.Run("file="+label, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = r.Test(paths[i%len(paths)], "Googlebot")
			}
		})
	}
}

// BenchmarkParse measures parsing; MB/s gives the time per KiB.
func BenchmarkParse(b *testing.B) {
	files := benchFiles(b)
	for _, label := range benchOrder {
		body := files[label]
		b.Run("file="+label, func(b *testing.B) {
			b.SetBytes(int64(min(len(body), robots.DefaultMaxBytes)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = robots.Parse(body)
			}
		})
	}
}

// BenchmarkRetained reports the heap a compiled file keeps alive
// ("retained-B") next to the octets parsed ("parsed-B").
func BenchmarkRetained(b *testing.B) {
	files := benchFiles(b)
	for _, label := range benchOrder {
		body := files[label]
		b.Run("file="+label, func(b *testing.B) {
			const n = 20
			keep := make([]*robots.Robots, n)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := range keep {
				keep[i] = robots.Parse(body)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			for i := 0; i < b.N; i++ {
				_ = keep[i%n].Size
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "retained-B")
			b.ReportMetric(float64(keep[0].Size), "parsed-B")
			runtime.KeepAlive(keep)
		})
	}
}

// BenchmarkWorstCase matches patterns built to make backtracking matchers
// explode against long paths.
func BenchmarkWorstCase(b *testing.B) {
	cases := []struct{ name, pattern, path string }{
		{"stars-20-miss", "/" + strings.Repeat("*a", 20) + "*b", "/" + strings.Repeat("a", 5000)},
		{"stars-20-anchored-miss", "/" + strings.Repeat("*a", 20) + "*b$", "/" + strings.Repeat("a", 5000) + "b" + "a"},
		{"stars-1000-miss", "/" + strings.Repeat("*a", 1000) + "*b", "/" + strings.Repeat("a", 5000)},
	}
	for _, c := range cases {
		r := robots.Parse([]byte("user-agent: *\ndisallow: " + c.pattern + "\n"))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.path)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if !r.Test(c.path, "x").Allowed {
					b.Fatal("matched")
				}
			}
		})
	}
}

// BenchmarkUsage measures Usage and one label's preference: on corpus files
// (which have no Content-Usage rules: the cost of Test), on the example of
// draft-ietf-aipref-attach-05 3.4, and on 10,000 rules that all tie.
func BenchmarkUsage(b *testing.B) {
	files := benchFiles(b)
	files["attach-example"] = []byte(attachExample)
	files["10000-ties"] = []byte("User-agent: *\n" + strings.Repeat("Content-Usage: /a train-ai=y, search=n\n", 10000))
	for _, label := range append(benchOrder, "attach-example", "10000-ties") {
		r := robots.Parse(files[label])
		b.Run("file="+label, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = r.Usage("/ai-ok/a", "Googlebot").Get("train-ai")
			}
		})
	}
}

// BenchmarkExtras measures Extras and one content signal.
func BenchmarkExtras(b *testing.B) {
	files := benchFiles(b)
	files["cloudflare-managed"] = []byte(cloudflareManaged + "User-agent: *\nCrawl-delay: 2\n")
	for _, label := range append(benchOrder, "cloudflare-managed") {
		r := robots.Parse(files[label])
		b.Run("file="+label, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, _ = r.Extras("Googlebot").ContentSignal("ai-train")
			}
		})
	}
}
