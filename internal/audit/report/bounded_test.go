package report

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/audit/report/loggen"
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

// uniqueKeyLog streams the hostile log of loggen.WriteUnique: every line
// a report-mode denial with a new host, URL, token and rule of about 2 KiB
// each.
func uniqueKeyLog(lines int) io.Reader {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(loggen.WriteUnique(pw, loggen.UniqueConfig{Lines: lines})) }()
	return pr
}

// heldOctets is what a table's entries hold: key octets and the heap of
// their payloads, counted from the fields, without the per-entry overhead.
func heldOctets[P any](t *topK[P], payload func(*P) int) (held int64) {
	for i := range t.entries {
		e := &t.entries[i]
		held += int64(len(e.key))
		if payload != nil {
			held += int64(payload(&e.p))
		}
	}
	return held
}

// Lines whose every key is new and 2 KiB long keep the tables within the
// byte budget, by the package's accounting and by the octets the entries
// hold, with the bounds reported: before the budget, the entry
// capacities alone let 41,000 keys of 2 KiB (82 MiB) be held.
func TestBoundedBytes(t *testing.T) {
	const lines = 20_000 // enough to fill every table to its entry capacity
	a := newAggregator(Bounds{}, filter{})
	in := &Input{}
	if err := a.readSource(&source{name: "-"}, uniqueKeyLog(lines), in); err != nil {
		t.Fatal(err)
	}
	if in.Lines != lines || in.Skipped != 0 {
		t.Fatalf("got %d lines, %d skipped; want %d, 0", in.Lines, in.Skipped, lines)
	}
	rep := a.build(0)
	tokenHeap := func(p *tokenStats) int { return 8*cap(p.hosts.set) + cap(p.hosts.hll) + 32*cap(p.tl.b) }
	hostHeap := func(p *hostStats) int { return 8*cap(p.versions.set) + cap(p.versions.hll) + len(p.lastSHA) }
	held := heldOctets(a.tokens, tokenHeap) + heldOctets(a.hostT, hostHeap) +
		heldOctets[violation](a.violations, nil) + heldOctets[ruleStats](a.rules, nil) + heldOctets[urlStats](a.urls, nil)
	used, budget := a.tableBytes()
	if held > DefaultBudget || used > budget || budget > DefaultBudget || held > used {
		t.Errorf("got %d octets held, %d accounted, budget %d; want held <= accounted <= budget <= %d", held, used, budget, DefaultBudget)
	}
	for _, c := range []struct {
		name              string
		tracked, rows     int
		capacity          int
		hit, byteHit      bool
		bytes, byteBudget int64
	}{
		{"tokens", rep.Tokens.Tracked, len(rep.Tokens.Rows), rep.Tokens.Capacity, rep.Tokens.BoundHit, rep.Tokens.ByteBoundHit, rep.Tokens.Bytes, rep.Tokens.ByteBudget},
		{"hosts", rep.Hosts.Tracked, len(rep.Hosts.Rows), rep.Hosts.Capacity, rep.Hosts.BoundHit, rep.Hosts.ByteBoundHit, rep.Hosts.Bytes, rep.Hosts.ByteBudget},
		{"violations", rep.Violations.Tracked, len(rep.Violations.Rows), rep.Violations.Capacity, rep.Violations.BoundHit, rep.Violations.ByteBoundHit, rep.Violations.Bytes, rep.Violations.ByteBudget},
		{"rules", rep.Rules.Tracked, len(rep.Rules.Rows), rep.Rules.Capacity, rep.Rules.BoundHit, rep.Rules.ByteBoundHit, rep.Rules.Bytes, rep.Rules.ByteBudget},
		{"urls", rep.DeniedURLs.Tracked, len(rep.DeniedURLs.Rows), rep.DeniedURLs.Capacity, rep.DeniedURLs.BoundHit, rep.DeniedURLs.ByteBoundHit, rep.DeniedURLs.Bytes, rep.DeniedURLs.ByteBudget},
	} {
		// Tokens: 1,000 rows of 2 KiB fit in their 6 MiB; the other
		// tables hit their byte budget before their capacity.
		byteHit := c.name != "tokens"
		if c.rows != c.tracked || c.tracked == 0 || c.tracked > c.capacity || !c.hit || c.byteHit != byteHit || c.bytes > c.byteBudget {
			t.Errorf("%s: got %d rows of %d tracked, capacity %d, bound hit %v, byte bound hit %v, %d of %d octets; want all tracked shown, within capacity and budget, bound hit, byte bound hit %v",
				c.name, c.rows, c.tracked, c.capacity, c.hit, c.byteHit, c.bytes, c.byteBudget, byteHit)
		}
	}
	var text strings.Builder
	if err := Render(&text, rep, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("the top %d sites were tracked (Space-Saving, as many as fit in 12.0 MiB)", rep.Hosts.Tracked),
		"the top 1000 crawlers were tracked (Space-Saving, capacity 1000)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report: want the note %q", want)
		}
	}
}

// tableBytes is the octets the seven tables account, and their budget.
func (a *aggregator) tableBytes() (used, budget int64) {
	for _, t := range [][2]int64{
		{a.tokens.used, a.tokens.budget}, {a.hostT.used, a.hostT.budget},
		{a.violations.used, a.violations.budget}, {a.rules.used, a.rules.budget},
		{a.urls.used, a.urls.budget}, {a.spendIDs.used, a.spendIDs.budget},
		{a.spendHosts.used, a.spendHosts.budget},
	} {
		used += t[0]
		budget += t[1]
	}
	return used, budget
}
