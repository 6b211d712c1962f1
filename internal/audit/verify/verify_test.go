package verify_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/audittest"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Origins of the fixture: A has rules, B answers 404 (unavailable), C 500
// (unreachable), D a windows-1252 file declared as such.
const (
	robotsA = "User-agent: examplebot\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: *\nDisallow: /\n\nUser-agent: MJ12bot\nAllow: /\n"
	robotsD = "User-agent: *\nDisallow: /gr\xf6\xdfe\n"
)

// fixture is an archive and a pair of logs (a rotated, gzipped backup and
// the current file) written by the real fetcher, cache, policy and chained
// writer, with each line shaped as proxy/auditline.go shapes it.
type fixture struct {
	archive, backup, current string
	shaA, shaD               string
}

// visit is one request of the fixture, on origin 'A'...'D' (0: a line
// that is not a decision).
type visit struct {
	origin byte
	ua     string
	path   string
}

var visits = []visit{
	{'A', "Mozilla/5.0 (compatible; ExampleBot/1.0)", "/private/x"},  // deny, rule
	{'A', "Mozilla/5.0 (compatible; ExampleBot/1.0)", "/private/ok"}, // allow, rule
	{'A', "ExampleBot/1.0", "/public"},                               // allow, no rule
	{'A', "OtherBot/2", "/anything"},                                 // deny, "*" group
	{'A', "ExampleBot/1.0", "/public/..%2Fprivate/y"},                // deny as resolved
	{'B', "AnyBot/1", "/x"},                                          // allow, unavailable
	{'C', "AnyBot/1", "/x"},                                          // deny, unreachable
	{'D', "AnyBot/1", "/gr%F6%DFe"},                                  // deny, raw octets
	{'D', "AnyBot/1", "/gr%C3%B6%C3%9Fe"},                            // deny, bridged
	{0, "", ""},                                                      // not proxied
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	origins := map[byte]*httptest.Server{}
	for c, h := range map[byte]http.HandlerFunc{
		'A': func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, robotsA) },
		'B': func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) },
		'C': func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) },
		'D': func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=windows-1252")
			fmt.Fprint(w, robotsD)
		},
	} {
		origins[c] = httptest.NewServer(h)
		t.Cleanup(origins[c].Close)
	}
	dir := t.TempDir()
	f := fixture{archive: filepath.Join(dir, "archive"), current: filepath.Join(dir, "audit.log"),
		backup: filepath.Join(dir, "audit-2026-11-22T20-00-00.000.log")}
	ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: f.archive, ParseLimit: 512 << 10, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	fetcher := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}})
	fetched := map[string]policy.Access{} // by robots.txt URL
	cache := access.NewCache(func(ctx context.Context, scheme, authority string) policy.Access {
		a := fetcher.Fetch(ctx, scheme, authority)
		if err := ar.Record(a); err != nil {
			t.Error(err)
		}
		a.Raw = nil
		fetched[a.URL] = a
		return a
	}, access.CacheOptions{})
	pol := policy.New(policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil), Cache: cache})

	// The first pass goes to what becomes the rotated file, the second
	// (cache hits) to the current one, written after a restart.
	for pass := range 2 {
		out, prev, err := audit.OpenFile(audit.FileOptions{Path: f.current})
		if err != nil {
			t.Fatal(err)
		}
		w := audit.NewWriter(out, audit.Options{Chain: true, Prev: prev})
		for _, v := range visits {
			line := []byte(`{"time":"2026-11-22T20:10:50Z","decision":"none","reason":"not-proxied","status":400}` + "\n")
			if v.origin != 0 {
				u, _ := strings.CutPrefix(origins[v.origin].URL, "http://")
				d := pol.Decide(context.Background(), policy.Request{Scheme: "http", Host: u, Path: v.path, UserAgent: v.ua})
				line = auditLine(origins[v.origin].URL+v.path, v.ua, d, fetched[d.RobotsURL])
			}
			if _, err := w.Write(line); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if pass == 0 { // rotate as lumberjack does
			if err := os.Rename(f.current, f.backup); err != nil {
				t.Fatal(err)
			}
		}
	}
	gzipFile(t, f.backup)
	f.backup += ".gz"
	f.shaA, f.shaD = audittest.SHAHex(robotsA), audittest.SHAHex(robotsD)
	return f
}

// auditLine renders a decision with the fields and field order of
// proxy/auditline.go, plus robots_sha256 and robots_fetched_at of the access
// in force.
func auditLine(url, ua string, d policy.Decision, a policy.Access) []byte {
	var buf bytes.Buffer
	decision := "deny"
	if d.Allowed {
		decision = "allow"
	}
	l := zerolog.New(&buf)
	e := l.Log().Str("time", "2026-11-22T20:10:50Z").Str("client", "127.0.0.1:40000").
		Str("method", "GET").Str("url", url).Str("user_agent", ua).Str("decision", decision).
		Str("reason", string(d.Reason)).Str("product_token", d.Identity.Token).
		Str("token_source", string(d.Identity.Source)).Strs("candidates", d.Identity.Candidates).
		Str("robots_url", d.RobotsURL)
	if d.Verdict.Agent != "" {
		e = e.Str("group", d.Verdict.Agent).Bool("star_fallback", d.Verdict.Fallback)
	}
	if r := d.Rule(); r != nil {
		e = e.Str("rule", r.Text()).Int("rule_line", r.Line)
	}
	if d.Access != "" {
		e = e.Str("access_result", string(d.Access)).Int("robots_status", d.Status).Str("cache", string(d.Cache))
		if a.HasBody() {
			e = e.Hex("robots_sha256", a.SHA256[:])
		}
		e = e.Str("robots_fetched_at", a.FetchedAt.UTC().Format(time.RFC3339Nano))
	}
	e.Int("status", 200).Int("bytes", 10).Float64("duration_ms", 1.5).Send()
	return buf.Bytes()
}

func gzipFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	if err := os.WriteFile(path+".gz", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
}

// editLines rewrites a log (plain or .gz) through edit.
func editLines(t *testing.T, path string, edit func([]string) []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := strings.HasSuffix(path, ".gz")
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		out.ReadFrom(zr)
		b = out.Bytes()
	}
	lines := edit(strings.SplitAfter(string(b), "\n"))
	plain := strings.TrimSuffix(path, ".gz")
	if err := os.WriteFile(plain, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if gz {
		gzipFile(t, plain)
	}
}

// rechain recomputes the prev of lines[from:], as a forger who edits a
// line would, or the writer after a crash cut lines[from-1].
func rechain(lines []string, from int) []string {
	var prev [sha256.Size]byte
	if from > 0 {
		prev = sha256.Sum256([]byte(lines[from-1]))
	} else {
		hex.Decode(prev[:], []byte(lines[0][len(lines[0])-67:len(lines[0])-3]))
	}
	for i := from; i < len(lines) && lines[i] != ""; i++ {
		l := lines[i]
		stripped := l[:len(l)-len(`,"prev":"`)-64-3] + "}\n"
		lines[i] = string(audit.AppendPrev(nil, []byte(stripped), prev))
		prev = sha256.Sum256([]byte(lines[i]))
	}
	return lines
}

type spot struct {
	file string // "backup" or "current"
	line int
	kind verify.Kind
}

func TestVerify(t *testing.T) {
	for _, tt := range []struct {
		name     string
		mutate   func(t *testing.T, f fixture)
		genesis  bool
		onlyCurr bool
		want     []spot
		verified int
	}{
		{name: "untouched", verified: 18},
		{name: "untouched genesis", genesis: true, verified: 18},
		{name: "genesis without the first file", genesis: true, onlyCurr: true, verified: 9,
			want: []spot{{"current", 1, verify.KindChain}}},
		{name: "line deleted", verified: 17, mutate: func(t *testing.T, f fixture) {
			editLines(t, f.current, func(l []string) []string { return append(l[:2:2], l[3:]...) })
		}, want: []spot{{"current", 3, verify.KindChain}}},
		{name: "line deleted in the gzipped backup", verified: 17, mutate: func(t *testing.T, f fixture) {
			editLines(t, f.backup, func(l []string) []string { return append(l[:1:1], l[2:]...) })
		}, want: []spot{{"backup", 2, verify.KindChain}}},
		{name: "decision edited", verified: 17, mutate: func(t *testing.T, f fixture) {
			editLines(t, f.current, func(l []string) []string {
				l[1] = strings.Replace(l[1], `"decision":"allow"`, `"decision":"deny"`, 1)
				return l
			})
		}, want: []spot{{"current", 2, verify.KindDecision}, {"current", 3, verify.KindChain}}},
		{name: "decision edited and the chain forged", verified: 17, mutate: func(t *testing.T, f fixture) {
			editLines(t, f.current, func(l []string) []string {
				l[0] = strings.Replace(l[0], `"decision":"deny"`, `"decision":"allow"`, 1)
				return rechain(l, 0)
			})
		}, want: []spot{{"current", 1, verify.KindDecision}}},
		{name: "rule line edited", verified: 17, mutate: func(t *testing.T, f fixture) {
			editLines(t, f.backup, func(l []string) []string {
				l[1] = strings.Replace(l[1], `"rule_line":3`, `"rule_line":2`, 1)
				return l
			})
		}, want: []spot{{"backup", 2, verify.KindDecision}, {"backup", 3, verify.KindChain}}},
		{name: "lines reordered", verified: 18, mutate: func(t *testing.T, f fixture) {
			editLines(t, f.current, func(l []string) []string { l[3], l[4] = l[4], l[3]; return l })
		}, want: []spot{{"current", 4, verify.KindChain}, {"current", 5, verify.KindChain}, {"current", 6, verify.KindChain}}},
		{name: "archived body swapped", verified: 8, mutate: func(t *testing.T, f fixture) {
			audittest.SwapBody(t, f.archive, f.shaA, "User-agent: *\nAllow: /\n")
		}, want: []spot{
			{"backup", 1, verify.KindAltered}, {"backup", 2, verify.KindAltered}, {"backup", 3, verify.KindAltered}, {"backup", 4, verify.KindAltered}, {"backup", 5, verify.KindAltered},
			{"current", 1, verify.KindAltered}, {"current", 2, verify.KindAltered}, {"current", 3, verify.KindAltered}, {"current", 4, verify.KindAltered}, {"current", 5, verify.KindAltered}}},
		{name: "no archived body", verified: 14, mutate: func(t *testing.T, f fixture) {
			removeArchived(t, f.archive, f.shaD)
		}, want: []spot{{"backup", 8, verify.KindUnverifiable}, {"backup", 9, verify.KindUnverifiable},
			{"current", 8, verify.KindUnverifiable}, {"current", 9, verify.KindUnverifiable}}},
		{name: "no record of an unavailable fetch", verified: 14, mutate: func(t *testing.T, f fixture) {
			removeArchived(t, f.archive, "none")
		}, want: []spot{{"backup", 6, verify.KindUnverifiable}, {"backup", 7, verify.KindUnverifiable},
			{"current", 6, verify.KindUnverifiable}, {"current", 7, verify.KindUnverifiable}}},
		{name: "line cut by a crash and repaired", verified: 17, mutate: func(t *testing.T, f fixture) {
			editLines(t, f.current, func(l []string) []string { l[4] = l[4][:20] + "\n"; return rechain(l, 5) })
		}, want: []spot{{"current", 5, verify.KindBadLine}}},
		{name: "last line cut", verified: 18, mutate: func(t *testing.T, f fixture) {
			editLines(t, f.current, func(l []string) []string { l[9] = l[9][:20]; return l })
		}, want: []spot{{"current", 10, verify.KindBadLine}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.mutate != nil {
				tt.mutate(t, f)
			}
			logs := []string{f.backup, f.current}
			if tt.onlyCurr {
				logs = logs[1:]
			}
			var got []spot
			res, err := verify.Verify(logs, verify.VerifyOptions{Archive: f.archive, Genesis: tt.genesis, Report: func(p verify.Problem) {
				name := "current"
				if p.File == f.backup {
					name = "backup"
				}
				got = append(got, spot{name, p.Line, p.Kind})
				t.Log(p)
			}})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("problems: got %v, want %v", got, tt.want)
			}
			if res.Verified != tt.verified {
				t.Errorf("verified: got %d, want %d", res.Verified, tt.verified)
			}
			if ok := res.OK(false); ok != (len(tt.want) == 0) {
				t.Errorf("OK: got %v, want %v", ok, len(tt.want) == 0)
			}
		})
	}
}

// removeArchived removes the body sha and every record of it ("none":
// the records of fetches without a body).
func removeArchived(t *testing.T, dir, sha string) {
	t.Helper()
	names, err := audit.RecordsOf(dir, sha)
	if err != nil || len(names) == 0 {
		t.Fatalf("RecordsOf(%s): got %v, %v", sha, names, err)
	}
	for _, n := range names {
		os.Remove(filepath.Join(dir, n))
	}
	if sha != "none" {
		os.Remove(filepath.Join(dir, "bodies", sha[:2], sha+".gz"))
	}
}

// TestVerifyUnverifiableIsNotOK: a line without its body fails unless
// unverifiable lines are allowed; without an archive every decision line
// is unverifiable and the chain is still checked.
func TestVerifyUnverifiableIsNotOK(t *testing.T) {
	f := newFixture(t)
	removeArchived(t, f.archive, f.shaD)
	res, err := verify.Verify([]string{f.backup, f.current}, verify.VerifyOptions{Archive: f.archive})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK(false) || !res.OK(true) || res.Unverifiable != 4 {
		t.Errorf("got OK(false) %v, OK(true) %v, %d unverifiable, want false, true, 4", res.OK(false), res.OK(true), res.Unverifiable)
	}
	res, err = verify.Verify([]string{f.backup, f.current}, verify.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unverifiable != 18 || res.ChainOnly != 2 || res.ChainBreaks != 0 || res.Lines != 20 || res.Files != 2 {
		t.Errorf("no archive: got %+v, want 18 unverifiable, 2 chained only, 20 lines in 2 files, no break", res)
	}
	if _, err := verify.Verify([]string{filepath.Join(t.TempDir(), "missing.log")}, verify.VerifyOptions{}); err == nil {
		t.Error("a missing log: got no error, want an I/O error")
	}
}
