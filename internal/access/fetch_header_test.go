package access_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/access/accesstest"
	"github.com/robotsproxy/robotsproxy/policy"
)

// repeatedHeader serves stdRobots with n Cache-Control lines of size
// octets each and the given Content-Type.
func repeatedHeader(n, size int, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := range n {
			v := "max-age=60, x=" + strings.Repeat(string(rune('a'+i%26)), size)
			w.Header().Add("Cache-Control", v[:size])
		}
		w.Header().Set("Content-Type", contentType)
		w.Write([]byte(stdRobots))
	}
}

// TestFetchKeepsBoundedHeader: Access.Header keeps one value of each kept
// field, cut to access.MaxKeptHeaderValue octets on a UTF-8 boundary, however
// many and however long the values the origin sends under the header limit.
func TestFetchKeepsBoundedHeader(t *testing.T) {
	longType := "text/plain; charset=utf-8; x=" + strings.Repeat("p", 2048-29)
	wideType := "text/plain; xy=" + strings.Repeat("\u00e9", 1000) // cut falls inside an é
	for _, tt := range []struct {
		name, contentType, wantType string
		n, size                     int
	}{
		{"12 Cache-Control lines of 4 KB, a 2 KB Content-Type", longType, longType[:access.MaxKeptHeaderValue], 12, 4000},
		{"a cut inside a UTF-8 sequence backs off", wideType, wideType[:access.MaxKeptHeaderValue-1], 1, 20},
		{"short values are kept whole", "text/plain", "text/plain", 3, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOrigin(t, repeatedHeader(tt.n, tt.size, tt.contentType))
			a := accesstest.NewFetcher(access.FetcherOptions{}).Fetch(context.Background(), "http", o.authority(t, "http"))
			if a.Result != policy.Successful {
				t.Fatalf("got %s (%v), want successful", a.Result, a.Err)
			}
			for k, v := range a.Header {
				if len(v) != 1 || len(v[0]) > access.MaxKeptHeaderValue || !utf8.ValidString(v[0]) {
					t.Errorf("%s: got %d values, the first %d octets (valid UTF-8 %v), want 1 value of at most %d valid octets",
						k, len(v), len(v[0]), utf8.ValidString(v[0]), access.MaxKeptHeaderValue)
				}
			}
			if got := a.Header.Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type: got %d octets %.40q..., want %d octets %.40q...", len(got), got, len(tt.wantType), tt.wantType)
			}
			if got, want := a.Header.Get("Cache-Control"), "max-age=60, x="; !strings.HasPrefix(got, want) {
				t.Errorf("Cache-Control: got %.40q..., want the first value, starting %q", got, want)
			}
			if a.MaxAge.Seconds() != 60 {
				t.Errorf("MaxAge: got %v, want 1m0s", a.MaxAge)
			}
		})
	}
}

// TestFetchHugeHeaderIsUnreachable: a response whose header is over
// access.MaxResponseHeaderBytes is a fetch error, so the file is
// unreachable (RFC 9309 2.3.1.4: complete disallow) and nothing is kept.
func TestFetchHugeHeaderIsUnreachable(t *testing.T) {
	for _, tt := range []struct {
		name    string
		n, size int
	}{
		{"200 Cache-Control lines of 4 KB", 200, 4000},
		{"one Cache-Control line of 70 KB", 1, 70 << 10},
		{"17 Cache-Control lines of 4 KB, just over", 17, 4000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOrigin(t, repeatedHeader(tt.n, tt.size, "text/plain"))
			a := accesstest.NewFetcher(access.FetcherOptions{}).Fetch(context.Background(), "http", o.authority(t, "http"))
			if a.Result != policy.Unreachable || a.Err == nil || a.Refused {
				t.Fatalf("got %s, error %v, refused %v; want unreachable with an error, not refused", a.Result, a.Err, a.Refused)
			}
			if a.Robots != nil || a.Header != nil || a.HasBody() || a.Status != 0 {
				t.Errorf("got rules %v, header of %d fields, body %v, status %d; want none", a.Robots != nil, len(a.Header), a.HasBody(), a.Status)
			}
			req := policy.Request{Scheme: "http", Host: o.Listener.Addr().String(), Path: "/anything", UserAgent: uaExampleBot}
			if d := accesstest.NewPolicy(nil, nil).Decide(context.Background(), req); d.Allowed || d.Reason != auditlog.ReasonUnreachable {
				t.Errorf("Decide(%+v): got Allowed %v Reason %q, want denied, %q", req, d.Allowed, d.Reason, auditlog.ReasonUnreachable)
			}
		})
	}
}
