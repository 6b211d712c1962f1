package report

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// unboundedLog streams n lines where every line has a new host, URL, rule
// and token, except that one line in four is the same heavy hitter.
func unboundedLog(n int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		var b strings.Builder
		for i := range n {
			host, tok := fmt.Sprintf("h%d.example", i), fmt.Sprintf("bot%d", i)
			if i%4 == 0 {
				host, tok = "heavy.example", "heavybot"
			}
			fmt.Fprintf(&b, `{"time":"2026-11-22T%02d:%02d:%02dZ","url":"https://%s/p%d","decision":"deny","reason":"rule","product_token":%q,"robots_url":"https://%s/robots.txt","rule":"Disallow: /p%d","rule_line":%d,"access_result":"successful","enforced":false,"robots_sha256":"%x"}`+"\n",
				i/3600%24, i/60%60, i%60, host, i, tok, host, i, i%100, i)
			if b.Len() > 1<<16 || i == n-1 {
				if _, err := io.WriteString(pw, b.String()); err != nil {
					return
				}
				b.Reset()
			}
		}
		pw.Close()
	}()
	return pr
}

// Feeding 200,000 lines with unbounded distinct keys keeps every table at
// its bound, reports the bound, keeps the heavy hitter exact, and
// switches the distinct counts to estimates.
func TestBoundedMemory(t *testing.T) {
	const n = 200_000
	b := Bounds{Tokens: 50, Hosts: 100, Violations: 200, Rules: 300, URLs: 400}
	rep, err := Collect([]string{"-"}, Options{Stdin: unboundedLog(n), Bounds: b})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Requests != n {
		t.Fatalf("requests: got %d, want %d", rep.Summary.Requests, n)
	}
	for _, c := range []struct {
		name     string
		rows     int
		capacity int
		hit      bool
		more     uint64
		distinct uint64
		exact    bool
	}{
		{"tokens", len(rep.Tokens.Rows), rep.Tokens.Capacity, rep.Tokens.BoundHit, rep.Tokens.MoreNotShown, rep.Tokens.Distinct, rep.Tokens.DistinctExact},
		{"hosts", len(rep.Hosts.Rows), rep.Hosts.Capacity, rep.Hosts.BoundHit, rep.Hosts.MoreNotShown, rep.Hosts.Distinct, rep.Hosts.DistinctExact},
		{"violations", len(rep.Violations.Rows), rep.Violations.Capacity, rep.Violations.BoundHit, rep.Violations.MoreNotShown, rep.Violations.Distinct, rep.Violations.DistinctExact},
		{"rules", len(rep.Rules.Rows), rep.Rules.Capacity, rep.Rules.BoundHit, rep.Rules.MoreNotShown, rep.Rules.Distinct, rep.Rules.DistinctExact},
		{"urls", len(rep.DeniedURLs.Rows), rep.DeniedURLs.Capacity, rep.DeniedURLs.BoundHit, rep.DeniedURLs.MoreNotShown, rep.DeniedURLs.Distinct, rep.DeniedURLs.DistinctExact},
	} {
		// About 150,001 distinct keys: every line's own, and the heavy one
		// (URLs and rules: all 200,000).
		if c.rows != c.capacity || !c.hit || c.exact || c.distinct < 140_000 || c.distinct > 215_000 || c.more != c.distinct-uint64(c.rows) {
			t.Errorf("%s: got %d rows of capacity %d, bound hit %v, distinct %d (exact %v), %d more", c.name, c.rows, c.capacity, c.hit, c.distinct, c.exact, c.more)
		}
	}
	if tok := rep.Tokens.Rows[0]; tok.Token != "heavybot" || tok.Requests-tok.Error > n/4 || tok.Requests < n/4 {
		t.Errorf("heavy hitter: got %+v, want heavybot with %d requests within its error", tok, n/4)
	}
	if h := rep.Hosts.Rows[0]; h.Host != "heavy.example" {
		t.Errorf("heavy host: got %+v", h)
	}
	if rep.Summary.DistinctHostsExact || rep.Summary.DistinctHosts < 145_000 || rep.Summary.DistinctHosts > 155_000 {
		t.Errorf("distinct hosts: got %d (exact %v), want about 150,001 estimated", rep.Summary.DistinctHosts, rep.Summary.DistinctHostsExact)
	}
	if rep.Timelines.Buckets > maxBuckets {
		t.Errorf("timeline: got %d buckets, want at most %d", rep.Timelines.Buckets, maxBuckets)
	}
}

// The aggregator's structures stay at their bounds while lines stream.
func TestBoundedStructures(t *testing.T) {
	b := Bounds{Tokens: 10, Hosts: 20, Violations: 30, Rules: 40, URLs: 50}
	a := newAggregator(b, filter{})
	s := &source{name: "-"}
	in := &Input{}
	if err := a.readSource(s, unboundedLog(120_000), in); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		entries, index int
		heap, capacity int
	}{
		{"tokens", len(a.tokens.entries), len(a.tokens.index), len(a.tokens.heap), b.Tokens},
		{"hosts", len(a.hostT.entries), len(a.hostT.index), len(a.hostT.heap), b.Hosts},
		{"violations", len(a.violations.entries), len(a.violations.index), len(a.violations.heap), b.Violations},
		{"rules", len(a.rules.entries), len(a.rules.index), len(a.rules.heap), b.Rules},
		{"urls", len(a.urls.entries), len(a.urls.index), len(a.urls.heap), b.URLs},
	} {
		if c.entries != c.capacity || c.index != c.capacity || c.heap != c.capacity {
			t.Errorf("%s: got %d entries, %d index keys, %d heap, want %d each", c.name, c.entries, c.index, c.heap, c.capacity)
		}
	}
	for _, d := range []*distinct{&a.hosts, &a.tokens.distinct, &a.urls.distinct} {
		if d.set != nil || len(d.hll) == 0 || len(d.hll) > 1<<14 {
			t.Errorf("distinct counter: got %d exact hashes, %d registers; want a sketch of at most 16384", len(d.set), len(d.hll))
		}
	}
	for _, e := range a.tokens.entries {
		if len(e.p.hosts.set) > 4*smallExactCap || len(e.p.tl.b) > maxBuckets {
			t.Errorf("token %s: %d host hashes, %d buckets", e.key, len(e.p.hosts.set), len(e.p.tl.b))
		}
	}
}

// hugeSHALog streams one line per host, each with a robots_sha256 of
// size octets (a hostile log: a real one has 64 hex digits).
func hugeSHALog(hosts, size int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sha := strings.Repeat("f", size)
		for i := range hosts {
			l := fmt.Sprintf(`{"time":"2026-11-22T10:00:00Z","url":"https://h%d.example/","decision":"allow","reason":"no-matching-rule","robots_sha256":"%d%s"}`+"\n", i, i, sha)
			if _, err := io.WriteString(pw, l); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr
}

// A host keeps at most maxKeyLen octets of its last robots_sha256,
// whatever the log holds: 200 hosts with 512 KiB values keep 400 KiB, not
// 100 MiB.
func TestBoundedHostSHA(t *testing.T) {
	const hosts, size = 200, 512 << 10
	a := newAggregator(Bounds{}, filter{})
	in := &Input{}
	if err := a.readSource(&source{name: "-"}, hugeSHALog(hosts, size), in); err != nil {
		t.Fatal(err)
	}
	if len(a.hostT.entries) != hosts || in.Skipped != 0 {
		t.Fatalf("got %d hosts, %d lines skipped; want %d, 0", len(a.hostT.entries), in.Skipped, hosts)
	}
	held := 0
	for _, e := range a.hostT.entries {
		if len(e.p.lastSHA) > maxKeyLen {
			t.Fatalf("host %s: got a robots_sha256 of %d octets, want at most %d", e.key, len(e.p.lastSHA), maxKeyLen)
		}
		held += len(e.p.lastSHA)
	}
	if held > hosts*maxKeyLen {
		t.Errorf("got %d octets of robots_sha256 held, want at most %d", held, hosts*maxKeyLen)
	}
	if n, _ := a.hostT.entries[0].p.versions.count(); n != 1 {
		t.Errorf("got %d robots.txt versions for one host, want 1", n)
	}
}
