package fleet

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// FuzzDecodeRecord feeds arbitrary record and body octets, as a damaged
// or hostile store could hold them: decoding never panics, and a result
// that decodes is successful only with a body that hashes to its record.
func FuzzDecodeRecord(f *testing.F) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	a := policy.Access{Result: policy.Successful, URL: "http://a.example/robots.txt", FinalURL: "http://a.example/robots.txt",
		Status: 200, MaxAge: -1, FetchedAt: time.Unix(1.7e9, 0), Raw: body, SHA256: sha256.Sum256(body)}
	good, _ := json.Marshal(newRecord(a, robots.Options{}.Limit(), time.Minute))
	f.Add(good, body)
	f.Add(good, []byte("User-agent: *\nAllow: /\n"))
	f.Add([]byte(`{"access_result":"unavailable","parse_limit":524288,"ttl_ms":1}`), []byte(nil))
	f.Add([]byte(`{"access_result":"successful","sha256":"zz","size":-1,"parse_limit":524288}`), []byte("x"))
	f.Add([]byte(`{"access_result":"unreachable","error":"x","header":{"Content-Type":["text/plain; charset=koi8-r"]},"parse_limit":524288}`), []byte{0xff})
	limit := robots.Options{}.Limit()
	f.Fuzz(func(t *testing.T, raw, body []byte) {
		r, err := decodeRecord(raw, limit)
		if err != nil {
			return
		}
		got, err := r.access(body, time.Minute, robots.Options{})
		if err != nil {
			return
		}
		if got.Result == policy.Successful && (got.Robots == nil || sha256.Sum256(body) != got.SHA256) {
			t.Fatalf("successful result without a matching body: %q", raw)
		}
		if got.Result != policy.Successful && got.Robots != nil {
			t.Fatalf("%s result with rules: %q", got.Result, raw)
		}
	})
}

// TestRecordSpeaksTheArchiveFormat: a shared record names and measures an
// Access as the audit archive's fetch record does (access_result,
// fetched_at in UTC, duration_ms in fractional milliseconds), so that
// one codec reads both.
func TestRecordSpeaksTheArchiveFormat(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	at := time.Date(2026, 3, 1, 12, 0, 0, 500, time.FixedZone("CET", 3600))
	for _, tt := range []struct {
		name string
		a    policy.Access
		want map[string]any
	}{
		{"successful", policy.Access{Result: policy.Successful, URL: "http://a.example/robots.txt", FinalURL: "http://a.example/robots.txt",
			Status: 200, MaxAge: -1, FetchedAt: at, Duration: 1500 * time.Microsecond, Raw: body, SHA256: sha256.Sum256(body)},
			map[string]any{"access_result": "successful", "duration_ms": 1.5, "fetched_at": "2026-03-01T11:00:00.0000005Z",
				"status": 200.0, "size": float64(len(body))}},
		{"unreachable", policy.Access{Result: policy.Unreachable, URL: "http://b.example/robots.txt", MaxAge: -1,
			FetchedAt: at, Duration: 2 * time.Second, Err: errTest},
			map[string]any{"access_result": "unreachable", "duration_ms": 2000.0, "error": "test error", "status": 0.0}},
	} {
		raw, err := json.Marshal(newRecord(tt.a, robots.Options{}.Limit(), time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: record %s: %s is %v, want %v", tt.name, raw, k, got[k], v)
			}
		}
		r, err := decodeRecord(raw, robots.Options{}.Limit())
		if err != nil {
			t.Fatalf("%s: decodeRecord: %v", tt.name, err)
		}
		var b []byte
		if tt.a.HasBody() {
			b = body
		}
		a, err := r.access(b, time.Minute, robots.Options{})
		if err != nil || a.Duration != tt.a.Duration || !a.FetchedAt.Equal(tt.a.FetchedAt) || a.Result != tt.a.Result {
			t.Errorf("%s: round trip: got %s %v at %v (%v), want %s %v at %v", tt.name, a.Result, a.Duration, a.FetchedAt, err,
				tt.a.Result, tt.a.Duration, tt.a.FetchedAt)
		}
	}
}

var errTest = errors.New("test error")

// TestRecordKeepsUnreachableCause: a replica that reads a shared
// unreachable result tells its clients the cause the fetching replica
// found; a record written without one gives none.
func TestRecordKeepsUnreachableCause(t *testing.T) {
	limit := robots.Options{}.Limit()
	tests := []struct {
		name string
		raw  func(t *testing.T) []byte
		want policy.Cause
	}{
		{"tls", encoded(policy.Access{Result: policy.Unreachable, Cause: policy.CauseTLS}), policy.CauseTLS},
		{"status", encoded(policy.Access{Result: policy.Unreachable, Status: 503, Cause: policy.CauseStatus}), policy.CauseStatus},
		{"dns", encoded(policy.Access{Result: policy.Unreachable, Cause: policy.CauseDNS}), policy.CauseDNS},
		{"unavailable has none", encoded(policy.Access{Result: policy.Unavailable, Status: 404}), policy.CauseNone},
		{"written without a cause", literal(`{"access_result":"unreachable","parse_limit":524288}`), policy.CauseNone},
		{"a cause this replica does not know", literal(`{"access_result":"unreachable","cause":"quantum","parse_limit":524288}`), policy.CauseOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.raw(t)
			r, err := decodeRecord(raw, limit)
			if err != nil {
				t.Fatalf("decodeRecord(%s): %v", raw, err)
			}
			a, err := r.access(nil, time.Minute, robots.Options{})
			if err != nil || a.Cause != tt.want {
				t.Errorf("record %s: got cause %q (%v), want %q", raw, a.Cause, err, tt.want)
			}
		})
	}
}

// encoded returns the stored form of a's record.
func encoded(a policy.Access) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		a.MaxAge = -1
		raw, err := json.Marshal(newRecord(a, robots.Options{}.Limit(), time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
}

// literal returns raw as a stored record.
func literal(raw string) func(t *testing.T) []byte {
	return func(*testing.T) []byte { return []byte(raw) }
}
