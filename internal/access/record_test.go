package access_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestRecordRoundTrip: an Access written as a Record and read back is the
// same fetch (durations at microsecond precision, times in UTC), with the
// body compiled again; a body that does not match is refused.
func TestRecordRoundTrip(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	a := policy.Access{Result: policy.Successful, URL: "http://a.example/robots.txt", FinalURL: "https://a.example/robots.txt",
		Status: 200, MaxAge: time.Hour, FetchedAt: time.Date(2026, 3, 1, 12, 0, 0, 7, time.Local), Duration: 1234567 * time.Nanosecond,
		Raw: body, SHA256: sha256.Sum256(body), Header: http.Header{"Content-Type": {"text/plain"}}}
	limit := robots.Options{}.Limit()
	raw, err := json.Marshal(access.NewRecord(a, limit))
	if err != nil {
		t.Fatal(err)
	}
	var r access.Record
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	got, err := r.Access(body, robots.Options{})
	if err != nil {
		t.Fatalf("Access: %v", err)
	}
	if got.Result != a.Result || got.URL != a.URL || got.FinalURL != a.FinalURL || got.Status != 200 || got.MaxAge != -1 ||
		!got.FetchedAt.Equal(a.FetchedAt) || got.FetchedAt.Location() != time.UTC || got.Duration != 1234*time.Microsecond ||
		got.SHA256 != a.SHA256 || got.Robots == nil || got.Robots.Test("/private", "x").Allowed {
		t.Errorf("round trip of %s: got %+v", raw, got)
	}
	if _, err := r.Access([]byte("User-agent: *\nAllow: /\n"), robots.Options{}); !errors.Is(err, access.ErrRecordMismatch) {
		t.Errorf("Access with another body: got %v, want ErrRecordMismatch", err)
	}
}
