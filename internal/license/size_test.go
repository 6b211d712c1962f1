package license_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/policy"
)

// rsl returns an RSL document of about n octets: header, then elem(i) for
// i = 0, 1, ... while it fits.
func rsl(n int, elem func(i int) string) string {
	var b strings.Builder
	b.WriteString(`<rsl xmlns="https://rslstandard.org/rsl">`)
	for i := 0; ; i++ {
		e := elem(i)
		if b.Len()+len(e)+len("</rsl>") > n {
			break
		}
		b.WriteString(e)
	}
	b.WriteString("</rsl>")
	return b.String()
}

// licenseShapes are benign and hostile license documents of 512 KiB, and
// a small benign one.
func licenseShapes() map[string]string {
	const size = 512 << 10
	terms := `<license><permits type="usage">search</permits><prohibits type="usage">train-ai</prohibits></license>`
	return map[string]string{
		"small benign": `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits type="usage">search</permits></license></content>` +
			`<content url="https://Example.com/articles/*" server="https://rslcollective.org/api">` + terms + `</content></rsl>`,
		"benign, a section per content with long terms": rsl(size, func(i int) string {
			return fmt.Sprintf(`<content url="/section-%d/*"><license><permits type="usage">search %s</permits></license></content>`, i, strings.Repeat("ai-use ", 30))
		}),
		"many tiny contents": rsl(size, func(i int) string { return fmt.Sprintf(`<content url="/%x"/>`, i) }),
		"many licenses per content": rsl(size, func(i int) string {
			if i == 0 {
				return `<content url="/">`
			}
			return `<license/>`
		}) + "", // closed by rsl's end tag: not well formed, see below
		"absolute urls with upper-case hosts": rsl(size, func(i int) string {
			return fmt.Sprintf(`<content url="https://HOST-%d.Example.COM/p%d/*" server="https://S.example/%d"/>`, i, i, i)
		}),
		"padded attributes": rsl(size, func(i int) string {
			return `<content url="` + strings.Repeat(" ", 200) + fmt.Sprintf("/p%d", i) + strings.Repeat(" ", 200) + `"/>`
		}),
		"long patterns": rsl(size, func(i int) string {
			return fmt.Sprintf(`<content url="/%d/%s*%s$"/>`, i, strings.Repeat("a*", 8000), strings.Repeat("%41", 4000))
		}),
	}
}

// TestRetainedMatchesHeap: the octets the license cache charges per
// license (access.Cache.Bytes, of which License.Retained) are at least
// 0.8 times the live heap each cached license keeps, for benign and
// hostile shapes, and not more than twice it.
func TestRetainedMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("fills caches")
	}
	for name, doc := range licenseShapes() {
		if name == "many licenses per content" {
			doc = strings.TrimSuffix(doc, "</rsl>") + "</content></rsl>"
		}
		t.Run(name, func(t *testing.T) {
			if _, err := license.Parse([]byte(doc)); err != nil {
				t.Fatalf("the document does not parse: %v", err)
			}
			n := max(4, min(1000, (2<<20)/len(doc)))
			heap, accounted := heapPerLicense(t, n, []byte(doc))
			t.Logf("%d licenses of %d octets: per license, heap %d octets, accounted %d (%.2fx the document)",
				n, len(doc), heap, accounted, float64(accounted)/float64(len(doc)))
			if float64(accounted) < 0.8*float64(heap) || accounted > 2*heap {
				t.Errorf("got %d octets accounted per license, want between 0.8 and 2 times the %d the heap keeps", accounted, heap)
			}
		})
	}
}

// heapPerLicense caches n licenses parsed from doc, as the license source
// does, and returns the live heap they add and the octets the cache
// accounts, per license.
func heapPerLicense(t *testing.T, n int, doc []byte) (heap, accounted int64) {
	t.Helper()
	fetch := func(_ context.Context, url string) policy.Access {
		l, err := license.Parse(doc)
		if err != nil {
			t.Error(err)
		}
		return policy.Access{Result: policy.Successful, URL: url, FinalURL: url, Status: 200, MaxAge: -1, Doc: l, FetchedAt: time.Now()}
	}
	c := access.NewDocumentCache(fetch, access.CacheOptions{MaxEntries: n, MaxBytes: 1 << 40})
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://host-%06d.example.com/license.xml", i)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for _, u := range urls {
		c.GetURL(context.Background(), u)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if c.Len() != n {
		t.Fatalf("got Len %d, want %d", c.Len(), n)
	}
	heap = (int64(m1.HeapAlloc) - int64(m0.HeapAlloc)) / int64(n)
	accounted = c.Bytes() / int64(n)
	runtime.KeepAlive(c)
	return heap, accounted
}

// BenchmarkCachedLicensesHeap caches 30 licenses of 512 KiB of one shape
// in a license cache bounded to 8 MiB (cache.max_bytes) and reports the
// licenses it kept, the octets it accounts and the live heap they add
// (MiB): hostile licenses of tiny content elements must not pin more
// than the bound.
//
//	go test -run '^$' -bench CachedLicensesHeap -benchtime 1x ./license/
func BenchmarkCachedLicensesHeap(b *testing.B) {
	shapes := licenseShapes()
	for _, name := range []string{"many tiny contents", "benign, a section per content with long terms"} {
		doc := []byte(shapes[name])
		b.Run(name, func(b *testing.B) {
			for range b.N {
				fetch := func(_ context.Context, url string) policy.Access {
					l, _ := license.Parse(doc)
					return policy.Access{Result: policy.Successful, URL: url, FinalURL: url, Status: 200, MaxAge: -1, Doc: l, FetchedAt: time.Now()}
				}
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				c := access.NewDocumentCache(fetch, access.CacheOptions{MaxBytes: 8 << 20})
				for i := range 30 {
					c.GetURL(context.Background(), fmt.Sprintf("https://host-%02d.example/license.xml", i))
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				mib := func(v int64) float64 { return float64(v) / (1 << 20) }
				b.ReportMetric(float64(c.Len()), "licenses")
				b.ReportMetric(mib(c.Bytes()), "accounted-MiB")
				b.ReportMetric(mib(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)), "heap-MiB")
				runtime.KeepAlive(c)
			}
		})
	}
}
