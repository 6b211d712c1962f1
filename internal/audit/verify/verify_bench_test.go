package verify_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/audittest"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// benchLog writes an archive of hosts robots.txt files (about 60 rules
// each) and a chained log of n decision lines on them, shaped as the
// proxy writes them.
func benchLog(b *testing.B, hosts, n int) (archive, log string, octets int64) {
	b.Helper()
	dir := b.TempDir()
	archive, log = filepath.Join(dir, "archive"), filepath.Join(dir, "audit.log")
	ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: archive, ParseLimit: 512 << 10, Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	compiled := make([]*robots.Robots, hosts)
	accesses := make([]policy.Access, hosts)
	for h := range hosts {
		var body strings.Builder
		for _, agent := range []string{"examplebot", "otherbot", "*"} {
			fmt.Fprintf(&body, "User-agent: %s\n", agent)
			for r := range 20 {
				fmt.Fprintf(&body, "Disallow: /dir%d/*.php$\nAllow: /dir%d/page%d\n", (r+h)%37, r, r*7%50)
			}
			body.WriteString("\n")
		}
		url := fmt.Sprintf("http://host%d.example/robots.txt", h)
		accesses[h] = audittest.Fetched(url, body.String(), t0)
		accesses[h].SHA256 = sha256.Sum256([]byte(body.String()))
		if err := ar.Record(accesses[h]); err != nil {
			b.Fatal(err)
		}
		compiled[h] = robots.Parse([]byte(body.String()))
	}
	f, err := os.Create(log)
	if err != nil {
		b.Fatal(err)
	}
	w := audit.NewWriter(f, audit.Options{Chain: true})
	uas := []identity.Identity{
		{Token: "ExampleBot", Candidates: []string{"ExampleBot"}, Source: policy.SourceUserAgent},
		{Token: "OtherBot", Candidates: []string{"OtherBot", "Helper"}, Source: policy.SourceUserAgent},
		{Token: "*", Source: policy.SourceDefault},
	}
	for i := range n {
		h := i % hosts
		path := fmt.Sprintf("/dir%d/page%d.html?session=%d", i%41, i%50, i)
		if i%5 == 0 {
			path = fmt.Sprintf("/dir%d/index.php", i%37)
		}
		d := policy.Decision{Identity: uas[i%3], RobotsURL: accesses[h].URL, Access: policy.Successful, Status: 200, Cache: policy.CacheHit}
		d.Verdict, _ = policy.MatchPath(compiled[h], path, d.Identity.Candidates...)
		d.Allowed, d.Reason = d.Verdict.Allowed, auditlog.ReasonRule
		if !d.Verdict.Matched() {
			d.Reason = auditlog.ReasonNoMatch
		}
		url := strings.TrimSuffix(accesses[h].URL, "/robots.txt") + path
		if _, err := w.Write(auditLine(url, "Mozilla/5.0 (compatible; "+d.Identity.Token+"/2.1; +https://example.com/bot)", d, accesses[h])); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(log)
	return archive, log, st.Size()
}

// BenchmarkVerify measures audit verify: lines/s is the figure to watch
// (target: 200,000 lines/s).
func BenchmarkVerify(b *testing.B) {
	const lines = 100_000
	archive, log, octets := benchLog(b, 50, lines)
	b.SetBytes(octets)
	b.ReportAllocs()
	for b.Loop() {
		res, err := verify.Verify([]string{log}, verify.VerifyOptions{Archive: archive})
		if err != nil || !res.OK(false) || res.Verified != lines {
			b.Fatalf("Verify: got %+v, %v, want %d lines verified", res, err, lines)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkVerifyManyHosts verifies a log naming 2,000 robots.txt files
// fetched on one day: the day's folder of the archive is listed once, not
// once per fetch.
func BenchmarkVerifyManyHosts(b *testing.B) {
	const hosts, lines = 2000, 20_000
	archive, log, octets := benchLog(b, hosts, lines)
	b.SetBytes(octets)
	b.ReportAllocs()
	for b.Loop() {
		res, err := verify.Verify([]string{log}, verify.VerifyOptions{Archive: archive})
		if err != nil || !res.OK(false) || res.Verified != lines {
			b.Fatalf("Verify: got %+v, %v, want %d lines verified", res, err, lines)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
