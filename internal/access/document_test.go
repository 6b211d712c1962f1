package access_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/access/accesstest"
	"github.com/robotsproxy/robotsproxy/policy"
)

// textDoc is a Document for the tests: the body as text.
type textDoc string

func (d textDoc) Retained() int { return len(d) }

func parseText(body []byte, _ http.Header) (policy.Document, error) {
	if strings.Contains(string(body), "<bad") {
		return nil, errors.New("malformed")
	}
	return textDoc(body), nil
}

var docOpts = access.DocumentOptions{What: "license", Accept: "application/rsl+xml", MaxBytes: 16, Parse: parseText}

func TestFetchDocument(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		result policy.AccessResult
		cause  policy.Cause
		doc    policy.Document
		raw    bool
	}{
		{"parsed", 200, "<rsl/>", policy.Successful, policy.CauseNone, textDoc("<rsl/>"), true},
		{"at the limit", 200, strings.Repeat("x", 16), policy.Successful, policy.CauseNone, textDoc(strings.Repeat("x", 16)), true},
		{"over the limit", 200, strings.Repeat("x", 17), policy.Unreachable, policy.CauseTooLarge, nil, false},
		{"malformed", 200, "<bad", policy.Unreachable, policy.CauseOther, nil, true},
		{"missing", 404, "", policy.Unavailable, policy.CauseNone, nil, false},
		{"server error", 503, "", policy.Unreachable, policy.CauseStatus, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var accept string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				accept = r.Header.Get("Accept")
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			a := accesstest.NewFetcher(access.FetcherOptions{}).FetchDocument(context.Background(), srv.URL+"/license.xml", docOpts)
			if a.Result != tt.result || a.Cause != tt.cause || a.Doc != tt.doc {
				t.Fatalf("got %s cause %s doc %v err %v, want %s cause %s doc %v", a.Result, a.Cause, a.Doc, a.Err, tt.result, tt.cause, tt.doc)
			}
			if a.HasBody() != tt.raw || (a.Raw != nil) != tt.raw {
				t.Errorf("HasBody %v, Raw %q, want a body %v", a.HasBody(), a.Raw, tt.raw)
			}
			if accept != "application/rsl+xml" {
				t.Errorf("Accept %q", accept)
			}
			if a.FetchedAt.IsZero() || a.Status != tt.status {
				t.Errorf("FetchedAt %v, Status %d", a.FetchedAt, a.Status)
			}
		})
	}
}

func TestDocumentCache(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte("<rsl/>" + r.URL.Path[:2]))
	}))
	defer srv.Close()
	f := accesstest.NewFetcher(access.FetcherOptions{})
	c := access.NewDocumentCache(func(ctx context.Context, url string) policy.Access {
		return f.FetchDocument(ctx, url, docOpts)
	}, access.CacheOptions{})
	ctx := context.Background()
	a, st := c.GetURL(ctx, srv.URL+"/a")
	if st != policy.CacheMiss || a.Doc != textDoc("<rsl/>/a") || a.Raw != nil {
		t.Fatalf("first: %s %v raw %q", st, a.Doc, a.Raw)
	}
	if a, st = c.GetURL(ctx, srv.URL+"/a"); st != policy.CacheHit || a.Doc != textDoc("<rsl/>/a") {
		t.Fatalf("second: %s %v", st, a.Doc)
	}
	if a, _ = c.GetURL(ctx, srv.URL+"/b"); a.Doc != textDoc("<rsl/>/b") || n.Load() != 2 {
		t.Fatalf("other URL: %v after %d fetches", a.Doc, n.Load())
	}
	if c.Bytes() <= 0 || c.Len() != 2 {
		t.Errorf("Bytes %d Len %d", c.Bytes(), c.Len())
	}
}
