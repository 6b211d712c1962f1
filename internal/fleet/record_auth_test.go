package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robotsproxy/robotsproxy/policy"
)

// testRecordKey is the record key of the tests that set one.
var testRecordKey = []byte("0123456789abcdef0123456789abcdef")

// refusedCount returns robotsproxy_shared_records_refused_total{reason}
// of reg.
func refusedCount(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "robotsproxy_shared_records_refused_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no robotsproxy_shared_records_refused_total{reason=%q}", reason)
	return 0
}

// withKey gives a replica the record key key (nil: none).
func withKey(key []byte) func(*Options) {
	return func(o *Options) { o.RecordKey = key }
}

// forge writes at recKey the record of a (and its body), as another
// application that can write to the store would: signed under key for
// the store key signAs and the body signBody when key is not nil.
func forge(t *testing.T, r *replica, recKey string, a policy.Access, key []byte, signAs string, signBody []byte) {
	t.Helper()
	ctx := context.Background()
	rec := newRecord(a, r.o.Parse.Limit(), time.Minute)
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	raw = seal(key, signAs, raw, signBody)
	if a.HasBody() {
		r.rdb.Set(ctx, r.key("body", rec.SHA256), a.Raw, time.Minute)
	}
	r.rdb.Set(ctx, recKey, raw, time.Minute)
}

// TestFetchRefusesForeignRecords writes, under the key of an authority
// whose robots.txt disallows /private, records that do not come from a
// fetch of that authority by a replica of the fleet. Each must be a miss
// (refused, counted, logged; the origin fetched again) and /private stay
// disallowed, except the one case an unauthenticated store cannot tell:
// a fully formed record naming the right URL, with no record key.
func TestFetchRefusesForeignRecords(t *testing.T) {
	rs := startRedis(t)
	allowAll := "User-agent: *\nAllow: /\n"
	tests := []struct {
		name string
		key  []byte // the replicas' record key
		// plant writes the foreign record at recKey, the key of the
		// authority of url; other is another authority's origin.
		plant  func(t *testing.T, r *replica, recKey, url string, other *robotsOrigin)
		reason string // the refusal counted; "" when the record is used
	}{
		{"another authority's 404 record", nil, func(t *testing.T, r *replica, recKey, _ string, other *robotsOrigin) {
			other.status = http.StatusNotFound
			copyRecord(t, r, other, recKey)
		}, refusedURL},
		{"another authority's allow-all record", nil, func(t *testing.T, r *replica, recKey, _ string, other *robotsOrigin) {
			other.body = allowAll
			copyRecord(t, r, other, recKey)
		}, refusedURL},
		{"another authority's 404 record, with a key", testRecordKey, func(t *testing.T, r *replica, recKey, _ string, other *robotsOrigin) {
			other.status = http.StatusNotFound
			copyRecord(t, r, other, recKey)
		}, refusedURL},
		{"another authority's record renamed, with a key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, other *robotsOrigin) {
			other.body = allowAll
			copyRecord(t, r, other, recKey)
			raw, _ := r.rdb.Get(context.Background(), recKey).Bytes()
			var rec record
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatal(err)
			}
			rec.URL, rec.FinalURL = url, url
			raw, _ = json.Marshal(rec)
			r.rdb.Set(context.Background(), recKey, raw, time.Minute)
		}, refusedMAC},
		{"forged unavailable", nil, func(t *testing.T, r *replica, recKey, _ string, _ *robotsOrigin) {
			r.rdb.Set(context.Background(), recKey, `{"access_result":"unavailable","parse_limit":524288,"ttl_ms":60000,"max_age_ms":-1}`, time.Minute)
		}, refusedURL},
		{"forged unavailable naming the URL, with a key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, _ *robotsOrigin) {
			forge(t, r, recKey, policy.Access{Result: policy.Unavailable, URL: url, Status: 404, MaxAge: -1, FetchedAt: time.Now()}, nil, "", nil)
		}, refusedMAC},
		{"forged allow-all naming the URL, with a key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, _ *robotsOrigin) {
			forge(t, r, recKey, successful(url, allowAll), nil, "", nil)
		}, refusedMAC},
		{"forged allow-all signed with another key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, _ *robotsOrigin) {
			forge(t, r, recKey, successful(url, allowAll), []byte("another key, of another fleet!!"), recKey, []byte(allowAll))
		}, refusedMAC},
		{"forged allow-all with a MAC of another store key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, _ *robotsOrigin) {
			forge(t, r, recKey, successful(url, allowAll), testRecordKey, recKey+"x", []byte(allowAll))
		}, refusedMAC},
		{"record signed over another body, with a key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, _ *robotsOrigin) {
			forge(t, r, recKey, successful(url, allowAll), testRecordKey, recKey, []byte("User-agent: *\nDisallow: /private\n"))
		}, refusedMAC},
		{"signed record with a member added, with a key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, _ *robotsOrigin) {
			forge(t, r, recKey, successful(url, allowAll), testRecordKey, recKey, []byte(allowAll))
			raw, _ := r.rdb.Get(context.Background(), recKey).Bytes()
			r.rdb.Set(context.Background(), recKey, append([]byte(`{"access_result":"unavailable",`), raw[1:]...), time.Minute)
		}, refusedMAC},
		// A genuine record of the authority (signed under the fleet's key)
		// that allowed everything when it was fetched, replayed later.
		{"genuine record replayed after its TTL, with a key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, _ *robotsOrigin) {
			old := successful(url, allowAll)
			old.FetchedAt = time.Now().Add(-time.Hour)
			forge(t, r, recKey, old, testRecordKey, recKey, old.Raw)
		}, refusedAge},
		{"genuine record with its store lifetime lengthened, with a key", testRecordKey, func(t *testing.T, r *replica, recKey, url string, _ *robotsOrigin) {
			a := successful(url, allowAll)
			forge(t, r, recKey, a, testRecordKey, recKey, a.Raw)
			r.rdb.Expire(context.Background(), recKey, 2*time.Minute)
		}, refusedAge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flush(t, newReplica(t, rs.URL(), nil).Store)
			o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
			other := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
			writer, reader := newReplica(t, rs.URL(), withKey(tc.key)), newReplica(t, rs.URL(), withKey(tc.key))
			recKey := writer.recordKey("http://" + o.authority())
			url := policy.RobotsURL("http", o.authority())
			tc.plant(t, writer, recKey, url, other)
			got := reader.Fetch(context.Background(), "http", o.authority(), fetcher())
			if n := o.fetches.Load(); n != 1 {
				t.Errorf("origin fetches: got %d, want 1 (the planted record is a miss)", n)
			}
			if allowed(got, "Bot", "/private") {
				t.Errorf("/private: allowed with the planted record, want disallowed")
			}
			if got.URL != url {
				t.Errorf("URL: got %q, want %q", got.URL, url)
			}
			if n := refusedCount(t, reader.reg, tc.reason); n != 1 {
				t.Errorf("refused records (%s): got %v, want 1", tc.reason, n)
			}
			if n := reader.log.count("shared robots.txt record refused"); n != 1 {
				t.Errorf("refusal warnings: got %d, want 1", n)
			}
			if strings.Contains(reader.log.b.String(), string(testRecordKey)) {
				t.Errorf("the log holds the record key")
			}
			// The refetched result replaced the planted one for the fleet.
			third := newReplica(t, rs.URL(), withKey(tc.key))
			if a := third.Fetch(context.Background(), "http", o.authority(), fetcher()); allowed(a, "Bot", "/private") || o.fetches.Load() != 1 {
				t.Errorf("after the refetch: /private allowed %v, origin fetches %d; want disallowed, 1", allowed(a, "Bot", "/private"), o.fetches.Load())
			}
		})
	}
}

// copyRecord has replica r fetch other's robots.txt through the store
// and copies its record to recKey, as a key swap would.
func copyRecord(t *testing.T, r *replica, other *robotsOrigin, recKey string) {
	t.Helper()
	ctx := context.Background()
	r.Fetch(ctx, "http", other.authority(), fetcher())
	raw, err := r.rdb.Get(ctx, r.recordKey("http://"+other.authority())).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	r.rdb.Set(ctx, recKey, raw, time.Minute)
}

// successful is the successful Access of body at url.
func successful(url, body string) policy.Access {
	return policy.Access{Result: policy.Successful, URL: url, FinalURL: url, Status: 200, MaxAge: -1,
		FetchedAt: time.Now(), Raw: []byte(body), SHA256: sha256.Sum256([]byte(body)),
		Header: http.Header{"Content-Type": {"text/plain"}}}
}

// TestForgedRecordWithoutKeyIsUsed pins the documented limit: without a
// record key, a fully formed record that names the right robots.txt URL
// cannot be told from a replica's, and is used.
func TestForgedRecordWithoutKeyIsUsed(t *testing.T) {
	rs := startRedis(t)
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
	r := newReplica(t, rs.URL(), nil)
	url := policy.RobotsURL("http", o.authority())
	forge(t, r, r.recordKey("http://"+o.authority()), successful(url, "User-agent: *\nAllow: /\n"), nil, "", nil)
	got := r.Fetch(context.Background(), "http", o.authority(), fetcher())
	if o.fetches.Load() != 0 || !allowed(got, "Bot", "/private") {
		t.Errorf("origin fetches %d, /private allowed %v: want 0 and true (the unauthenticated store's limit)", o.fetches.Load(), allowed(got, "Bot", "/private"))
	}
	if n := refusedCount(t, r.reg, refusedURL) + refusedCount(t, r.reg, refusedMAC); n != 0 {
		t.Errorf("refused records: got %v, want 0", n)
	}
}

// TestFetchWithRecordKeyShares: replicas with the same record key share
// every result (one origin fetch), including a header that is not
// UTF-8; a replica with another key refuses their records.
func TestFetchWithRecordKeyShares(t *testing.T) {
	rs := startRedis(t)
	tests := []struct {
		name   string
		status int
		body   string
		header string // a Last-Modified value
	}{
		{"successful", 200, "User-agent: *\nDisallow: /private\n", ""},
		{"unavailable", 404, "", ""},
		{"unreachable", 503, "", ""},
		{"header not UTF-8", 200, "User-agent: *\nDisallow: /private\n", "Tue, 04 Nov 2025 \xff\xfe GMT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flush(t, newReplica(t, rs.URL(), nil).Store)
			o := newRobotsOrigin(t, tc.body)
			o.status = tc.status
			if tc.header != "" {
				o.header["Last-Modified"] = []string{tc.header}
			}
			a, b := newReplica(t, rs.URL(), withKey(testRecordKey)), newReplica(t, rs.URL(), withKey(testRecordKey))
			first := a.Fetch(context.Background(), "http", o.authority(), fetcher())
			second := b.Fetch(context.Background(), "http", o.authority(), fetcher())
			if n := o.fetches.Load(); n != 1 || b.counter("hits") != 1 {
				t.Fatalf("origin fetches %d, hits %v: want 1, 1 (%s)", n, b.counter("hits"), b.log.b.String())
			}
			if second.Result != first.Result || second.SHA256 != first.SHA256 || allowed(second, "Bot", "/private") != allowed(first, "Bot", "/private") {
				t.Errorf("shared copy: got %s sha %x, want %s sha %x", second.Result, second.SHA256, first.Result, first.SHA256)
			}
			c := newReplica(t, rs.URL(), withKey([]byte("the key of another fleet!!")))
			c.Fetch(context.Background(), "http", o.authority(), fetcher())
			if n := o.fetches.Load(); n != 2 || refusedCount(t, c.reg, refusedMAC) != 1 {
				t.Errorf("replica with another key: origin fetches %d, MAC refusals %v; want 2, 1", n, refusedCount(t, c.reg, refusedMAC))
			}
		})
	}
}

func TestReadRecordKey(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		want    string // "" for an error
	}{
		{"base64 with a line end", "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0\n", "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"},
		{"16 octets", "0123456789abcdef", "0123456789abcdef"},
		{"empty", "", ""},
		{"blanks only", " \n\t\n", ""},
		{"too short", "short-key\n", ""},
		{"too long", strings.Repeat("k", 5000), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadRecordKey(path)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("got key of %d octets and no error, want an error", len(got))
				}
				if !strings.Contains(err.Error(), path) || (len(strings.TrimSpace(tc.content)) > 0 && strings.Contains(err.Error(), strings.TrimSpace(tc.content))) {
					t.Errorf("error %q: want the file named and the key not shown", err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := ReadRecordKey(filepath.Join(dir, "absent")); err == nil {
		t.Error("absent file: no error")
	}
}

// TestSealVerify: a sealed record verifies under its key, store key and
// body only, whatever members it holds (a record written by a newer
// replica with a field this one does not know still verifies); any
// change to its octets does not.
func TestSealVerify(t *testing.T) {
	const name = "test:v2:robots:http://a.example:80"
	body := []byte("User-agent: *\nDisallow: /private\n")
	raw := []byte(`{"url":"http://a.example/robots.txt","access_result":"successful","cause":"a field of a newer replica"}`)
	sealed := seal(testRecordKey, name, raw, body)
	if !strings.HasPrefix(string(sealed), string(raw[:len(raw)-1])+`,"mac":"`) || len(sealed) != len(raw)-1+macSuffixLen {
		t.Fatalf("seal: got %s", sealed)
	}
	var rec record
	if err := json.Unmarshal(sealed, &rec); err != nil || rec.URL != "http://a.example/robots.txt" {
		t.Fatalf("a sealed record does not decode as the record: %+v, %v", rec, err)
	}
	flip := func(i int) []byte { b := []byte(string(sealed)); b[i] ^= 1; return b }
	tests := []struct {
		name string
		key  []byte
		at   string
		raw  []byte
		body []byte
		ok   bool
	}{
		{"as sealed", testRecordKey, name, sealed, body, true},
		{"no key: not checked", nil, name, raw, body, true},
		{"unsealed", testRecordKey, name, raw, body, false},
		{"another key", []byte("0123456789abcdef0123456789abcdeX"), name, sealed, body, false},
		{"another store key", testRecordKey, name + "x", sealed, body, false},
		{"another body", testRecordKey, name, sealed, append([]byte("#\n"), body...), false},
		{"no body", testRecordKey, name, sealed, nil, false},
		{"a record octet changed", testRecordKey, name, flip(10), body, false},
		{"a MAC digit changed", testRecordKey, name, flip(len(sealed) - 5), body, false},
		{"MAC not hex", testRecordKey, name, []byte(strings.Replace(string(sealed), `"mac":"`, `"mac":"zz`, 1)[:len(sealed)]), body, false},
		{"cut", testRecordKey, name, sealed[:len(sealed)-1], body, false},
		{"a member after the MAC", testRecordKey, name, append(sealed[:len(sealed)-1:len(sealed)-1], `,"x":1}`...), body, false},
		{"empty", testRecordKey, name, nil, body, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verify(tc.key, tc.at, tc.raw, tc.body)
			if (err == nil) != tc.ok {
				t.Errorf("verify: got %v, want ok %v", err, tc.ok)
			}
		})
	}
}
