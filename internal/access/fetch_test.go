package access_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/access/accesstest"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// stdRobots is the body every successful fetch in these tests serves (as a
// prefix at least): /private is disallowed for everyone.
const stdRobots = "User-agent: *\nDisallow: /private\n"

// origin is a test origin (testkit.Origin, which counts the requests it
// answers) that names its authority.
type origin struct{ *testkit.Origin }

func newOrigin(t *testing.T, h http.Handler) *origin { return &origin{testkit.NewOrigin(t, h)} }

func newOriginAt(t *testing.T, addr string, h http.Handler) *origin {
	return &origin{testkit.NewOriginAt(t, addr, h)}
}

func newTLSOrigin(t *testing.T, h http.Handler) *origin { return &origin{testkit.NewTLSOrigin(t, h)} }

// authority returns the canonical authority of the origin for scheme.
func (o *origin) authority(t *testing.T, scheme string) string {
	t.Helper()
	_, a, err := policy.Authority(scheme, o.Listener.Addr().String())
	if err != nil {
		t.Fatalf("Authority(%q, %q): %v", scheme, o.Listener.Addr(), err)
	}
	return a
}

// serve answers every request with status, body and header key-value pairs.
func serve(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// redirects serves /robots.txt -> /hop1 -> ... -> /hopN with 302s, and
// body with 200 at /hopN (at /robots.txt when n is 0).
func redirects(n int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		i := 0
		if r.URL.Path != "/robots.txt" {
			if _, err := fmt.Sscanf(r.URL.Path, "/hop%d", &i); err != nil || i < 1 || i > n {
				http.NotFound(w, r)
				return
			}
		}
		if i < n {
			http.Redirect(w, r, fmt.Sprintf("/hop%d", i+1), http.StatusFound)
			return
		}
		io.WriteString(w, body)
	}
}

// fetchDeadline bounds every fetch in TestFetcher.
const fetchDeadline = 4 * time.Second

// fetchCheck is a case-specific check run after the common ones.
type fetchCheck func(t *testing.T, a policy.Access)

func TestFetcher(t *testing.T) {
	tests := []struct {
		name       string
		scheme     string // "" means http
		opts       access.FetcherOptions
		setup      func(t *testing.T) (authority string, check fetchCheck)
		wantResult policy.AccessResult
		wantStatus int
		wantErr    bool
	}{
		{
			name: "200 with a body",
			opts: access.FetcherOptions{UserAgent: "robotsproxy-test/1.0"},
			setup: func(t *testing.T) (string, fetchCheck) {
				var gotUA atomic.Value
				o := newOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					gotUA.Store(r.Method + " " + r.URL.Path + " " + r.UserAgent())
					io.WriteString(w, stdRobots)
				}))
				auth := o.authority(t, "http")
				return auth, func(t *testing.T, a policy.Access) {
					wantURL := "http://" + auth + "/robots.txt"
					if a.URL != wantURL || a.FinalURL != wantURL {
						t.Errorf("got URL %q FinalURL %q, want both %q", a.URL, a.FinalURL, wantURL)
					}
					if got, want := gotUA.Load(), "GET /robots.txt robotsproxy-test/1.0"; got != want {
						t.Errorf("origin saw request %q, want %q", got, want)
					}
					if a.Robots.Truncated {
						t.Errorf("got Robots.Truncated true for a %d-byte body, want false", len(stdRobots))
					}
					if a.MaxAge != -1 {
						t.Errorf("got MaxAge %v without Cache-Control, want -1", a.MaxAge)
					}
					if a.Duration <= 0 {
						t.Errorf("got Duration %v, want > 0", a.Duration)
					}
				}
			},
			wantResult: policy.Successful, wantStatus: 200,
		},
		{
			name: "204 no content is an empty file",
			setup: func(t *testing.T) (string, fetchCheck) {
				o := newOrigin(t, serve(http.StatusNoContent, ""))
				return o.authority(t, "http"), func(t *testing.T, a policy.Access) {
					if v := a.Robots.Test("/private/x"); !v.Allowed {
						t.Errorf("empty file: got /private/x denied, want allowed")
					}
				}
			},
			wantResult: policy.Successful, wantStatus: 204,
		},
		{
			name: "3 redirects across two authorities",
			setup: func(t *testing.T) (string, fetchCheck) {
				b := newOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					switch r.URL.Path {
					case "/hop2":
						http.Redirect(w, r, "/hop3", http.StatusTemporaryRedirect)
					case "/hop3":
						io.WriteString(w, stdRobots)
					default:
						http.NotFound(w, r)
					}
				}))
				a := newOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					switch r.URL.Path {
					case "/robots.txt":
						http.Redirect(w, r, "/hop1", http.StatusMovedPermanently)
					case "/hop1":
						http.Redirect(w, r, b.URL+"/hop2", http.StatusPermanentRedirect)
					default:
						http.NotFound(w, r)
					}
				}))
				return a.authority(t, "http"), func(t *testing.T, got policy.Access) {
					if want := b.URL + "/hop3"; got.FinalURL != want {
						t.Errorf("got FinalURL %q, want %q", got.FinalURL, want)
					}
					if want := a.URL + "/robots.txt"; got.URL != want {
						t.Errorf("got URL %q, want %q", got.URL, want)
					}
					if a.Hits() != 2 || b.Hits() != 2 {
						t.Errorf("got %d requests on the first authority and %d on the second, want 2 and 2", a.Hits(), b.Hits())
					}
				}
			},
			wantResult: policy.Successful, wantStatus: 200,
		},
		{
			name: "exactly 5 redirects",
			setup: func(t *testing.T) (string, fetchCheck) {
				o := newOrigin(t, redirects(5, stdRobots))
				return o.authority(t, "http"), func(t *testing.T, a policy.Access) {
					if want := o.URL + "/hop5"; a.FinalURL != want {
						t.Errorf("got FinalURL %q, want %q", a.FinalURL, want)
					}
				}
			},
			wantResult: policy.Successful, wantStatus: 200,
		},
		{
			name: "6 redirects",
			setup: func(t *testing.T) (string, fetchCheck) {
				o := newOrigin(t, redirects(6, stdRobots))
				return o.authority(t, "http"), func(t *testing.T, a policy.Access) {
					if got := o.Hits(); got != 6 {
						t.Errorf("got %d requests, want 6 (the 6th redirect is not followed)", got)
					}
				}
			},
			wantResult: policy.Unavailable, wantStatus: 0, wantErr: true,
		},
		{
			name: "redirect loop",
			setup: func(t *testing.T) (string, fetchCheck) {
				o := newOrigin(t, http.RedirectHandler("/robots.txt", http.StatusFound))
				return o.authority(t, "http"), nil
			},
			wantResult: policy.Unavailable, wantStatus: 0, wantErr: true,
		},
		{
			name: "404",
			setup: func(t *testing.T) (string, fetchCheck) {
				return newOrigin(t, serve(404, "User-agent: *\nDisallow: /\n")).authority(t, "http"), nil
			},
			wantResult: policy.Unavailable, wantStatus: 404,
		},
		{
			name: "401",
			setup: func(t *testing.T) (string, fetchCheck) {
				return newOrigin(t, serve(401, "User-agent: *\nDisallow: /\n")).authority(t, "http"), nil
			},
			wantResult: policy.Unavailable, wantStatus: 401,
		},
		{
			name: "403",
			setup: func(t *testing.T) (string, fetchCheck) {
				return newOrigin(t, serve(403, "")).authority(t, "http"), nil
			},
			wantResult: policy.Unavailable, wantStatus: 403,
		},
		{
			name: "429 unreachable when configured",
			opts: access.FetcherOptions{TooManyRequestsUnreachable: true},
			setup: func(t *testing.T) (string, fetchCheck) {
				return newOrigin(t, serve(429, "")).authority(t, "http"), nil
			},
			wantResult: policy.Unreachable, wantStatus: 429,
		},
		{
			name: "429 unavailable by default",
			setup: func(t *testing.T) (string, fetchCheck) {
				return newOrigin(t, serve(429, "")).authority(t, "http"), nil
			},
			wantResult: policy.Unavailable, wantStatus: 429,
		},
		{
			name: "500 body not parsed",
			setup: func(t *testing.T) (string, fetchCheck) {
				return newOrigin(t, serve(500, "User-agent: *\nAllow: /\n")).authority(t, "http"), nil
			},
			wantResult: policy.Unreachable, wantStatus: 500,
		},
		{
			name: "503 body not parsed",
			setup: func(t *testing.T) (string, fetchCheck) {
				return newOrigin(t, serve(503, "User-agent: *\nAllow: /\n", "Retry-After", "120")).authority(t, "http"), nil
			},
			wantResult: policy.Unreachable, wantStatus: 503,
		},
		{
			name: "connection refused",
			setup: func(t *testing.T) (string, fetchCheck) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := ln.Addr().String()
				ln.Close()
				_, auth, err := policy.Authority("http", addr)
				if err != nil {
					t.Fatal(err)
				}
				return auth, func(t *testing.T, a policy.Access) {
					if a.Refused {
						t.Errorf("got Refused true for a closed port, want false (not a guard refusal)")
					}
				}
			},
			wantResult: policy.Unreachable, wantStatus: 0, wantErr: true,
		},
		{
			name: "origin never answers",
			opts: access.FetcherOptions{Timeout: 300 * time.Millisecond},
			setup: func(t *testing.T) (string, fetchCheck) {
				release := make(chan struct{})
				o := newOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-release:
					case <-r.Context().Done():
					}
				}))
				t.Cleanup(func() { close(release) }) // runs before o.Close
				return o.authority(t, "http"), func(t *testing.T, a policy.Access) {
					if a.Duration >= fetchDeadline/2 {
						t.Errorf("got Duration %v with Timeout 300ms, want under %v", a.Duration, fetchDeadline/2)
					}
				}
			},
			wantResult: policy.Unreachable, wantStatus: 0, wantErr: true,
		},
		{
			name: "origin stalls in the body",
			opts: access.FetcherOptions{Timeout: 300 * time.Millisecond},
			setup: func(t *testing.T) (string, fetchCheck) {
				release := make(chan struct{})
				o := newOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, stdRobots)
					w.(http.Flusher).Flush()
					select {
					case <-release:
					case <-r.Context().Done():
					}
				}))
				t.Cleanup(func() { close(release) }) // runs before o.Close
				return o.authority(t, "http"), func(t *testing.T, a policy.Access) {
					if a.Duration >= fetchDeadline/2 {
						t.Errorf("got Duration %v with Timeout 300ms, want under %v", a.Duration, fetchDeadline/2)
					}
				}
			},
			wantResult: policy.Unreachable, wantStatus: 200, wantErr: true,
		},
		{
			name: "guard refuses loopback",
			opts: access.FetcherOptions{Guard: &netguard.Guard{}},
			setup: func(t *testing.T) (string, fetchCheck) {
				o := newOrigin(t, serve(200, stdRobots))
				return o.authority(t, "http"), func(t *testing.T, a policy.Access) {
					if !a.Refused || !errors.Is(a.Err, netguard.ErrRefused) {
						t.Errorf("got Refused %v Err %v, want Refused true and an error wrapping netguard.ErrRefused", a.Refused, a.Err)
					}
					if n := o.Hits(); n != 0 {
						t.Errorf("origin got %d requests, want 0", n)
					}
				}
			},
			wantResult: policy.Unreachable, wantStatus: 0, wantErr: true,
		},
		{
			name: "guard refuses a redirect target",
			opts: access.FetcherOptions{Guard: &netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}},
			setup: func(t *testing.T) (string, fetchCheck) {
				b := newOriginAt(t, "127.0.0.2:0", serve(200, stdRobots))
				a := newOrigin(t, http.RedirectHandler(b.URL+"/robots.txt", http.StatusFound))
				return a.authority(t, "http"), func(t *testing.T, got policy.Access) {
					if !got.Refused {
						t.Errorf("got Refused false (Err %v), want true", got.Err)
					}
					if a.Hits() != 1 || b.Hits() != 0 {
						t.Errorf("got %d requests on the allowed origin and %d on the refused one, want 1 and 0", a.Hits(), b.Hits())
					}
				}
			},
			wantResult: policy.Unreachable, wantStatus: 0, wantErr: true,
		},
		{
			name: "2 MiB body is truncated at the parse limit",
			setup: func(t *testing.T) (string, fetchCheck) {
				line := "# " + strings.Repeat("x", 61) + "\n"
				body := stdRobots + strings.Repeat(line, (2<<20)/len(line))
				o := newOrigin(t, serve(200, body))
				return o.authority(t, "http"), func(t *testing.T, a policy.Access) {
					if !a.Robots.Truncated || a.Robots.Size > robots.DefaultMaxBytes {
						t.Errorf("%d-byte body: got Truncated %v Size %d, want Truncated true Size <= %d", len(body), a.Robots.Truncated, a.Robots.Size, robots.DefaultMaxBytes)
					}
				}
			},
			wantResult: policy.Successful, wantStatus: 200,
		},
		{
			name:   "https with a trusted certificate",
			scheme: "https",
			setup: func(t *testing.T) (string, fetchCheck) {
				o := newTLSOrigin(t, serve(200, stdRobots))
				return o.authority(t, "https"), func(t *testing.T, a policy.Access) {
					if want := "https://" + o.authority(t, "https") + "/robots.txt"; a.FinalURL != want {
						t.Errorf("got FinalURL %q, want %q", a.FinalURL, want)
					}
				}
			},
			wantResult: policy.Successful, wantStatus: 200,
		},
		{
			name:   "https with an untrusted certificate",
			scheme: "https",
			opts:   access.FetcherOptions{TLS: &tls.Config{}},
			setup: func(t *testing.T) (string, fetchCheck) {
				return newTLSOrigin(t, serve(200, stdRobots)).authority(t, "https"), nil
			},
			wantResult: policy.Unreachable, wantStatus: 0, wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := tt.scheme
			if scheme == "" {
				scheme = "http"
			}
			auth, check := tt.setup(t)
			opts := tt.opts
			if scheme == "https" && opts.TLS == nil {
				opts.TLS = trustTestCert(t)
			}
			// The deadline keeps a fetcher that ignores its Timeout from
			// hanging the test; the timeout cases check they end well before.
			ctx, cancel := context.WithTimeout(context.Background(), fetchDeadline)
			defer cancel()
			a := accesstest.NewFetcher(opts).Fetch(ctx, scheme, auth)
			if a.Result != tt.wantResult || a.Status != tt.wantStatus {
				t.Fatalf("Fetch(%s://%s): got Result %q Status %d (Err %v), want Result %q Status %d",
					scheme, auth, a.Result, a.Status, a.Err, tt.wantResult, tt.wantStatus)
			}
			if (a.Err != nil) != tt.wantErr {
				t.Errorf("Fetch(%s://%s): got Err %v, want error %v", scheme, auth, a.Err, tt.wantErr)
			}
			if (a.Robots != nil) != (a.Result == policy.Successful) {
				t.Fatalf("Fetch(%s://%s): got Robots %v with Result %q, want Robots set only for %q", scheme, auth, a.Robots != nil, a.Result, policy.Successful)
			}
			if a.Robots != nil && a.Status != http.StatusNoContent {
				for path, want := range map[string]bool{"/private/x": false, "/public": true} {
					if v := a.Robots.Test(path, "AnyBot"); v.Allowed != want {
						t.Errorf("Fetch(%s://%s) rules: got %s allowed %v, want %v", scheme, auth, path, v.Allowed, want)
					}
				}
			}
			if check != nil {
				check(t, a)
			}
		})
	}
}

// trustTestCert returns a TLS config that trusts httptest's certificate.
func trustTestCert(t *testing.T) *tls.Config {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	defer srv.Close()
	return srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

func TestFetcherMaxAge(t *testing.T) {
	tests := []struct {
		name         string
		cacheControl string // "" means no header
		want         time.Duration
	}{
		{"max-age", "max-age=60", 60 * time.Second},
		{"absent", "", -1},
		{"public and max-age", "public, max-age=3600", time.Hour},
		{"max-age zero", "max-age=0", 0},
		{"no-cache", "no-cache", -1},
		{"s-maxage only", "s-maxage=30", -1},
		{"malformed max-age", "max-age=abc", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h []string
			if tt.cacheControl != "" {
				h = []string{"Cache-Control", tt.cacheControl}
			}
			o := newOrigin(t, serve(200, stdRobots, h...))
			a := accesstest.NewFetcher(access.FetcherOptions{}).Fetch(context.Background(), "http", o.authority(t, "http"))
			if a.Result != policy.Successful || a.MaxAge != tt.want {
				t.Errorf("Cache-Control %q: got Result %q MaxAge %v, want %q %v", tt.cacheControl, a.Result, a.MaxAge, policy.Successful, tt.want)
			}
		})
	}
}

// TestFetcherIgnoresProxyEnv checks that the fetcher never sends robots.txt
// requests to the proxy named in the environment, which would be the proxy
// itself.
func TestFetcherIgnoresProxyEnv(t *testing.T) {
	var proxyHits atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxyHits.Add(1)
		http.Error(w, "proxy must not be used", http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	for _, env := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		t.Setenv(env, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	o := newOrigin(t, serve(200, stdRobots))
	// net/http never proxies loopback IP literals, so ask for the origin by
	// a host name that resolves to loopback when there is one: only then
	// would an environment proxy be used.
	_, port, _ := net.SplitHostPort(o.Listener.Addr().String())
	hostport := o.Listener.Addr().String()
	if h := loopbackHostName(); h != "" {
		hostport = net.JoinHostPort(h, port)
		t.Logf("asking for the origin as %s", hostport)
	} else {
		t.Logf("no host name resolves to loopback only; the request check below cannot see a proxy")
	}
	_, auth, err := policy.Authority("http", hostport)
	if err != nil {
		t.Fatalf("Authority(http, %q): %v", hostport, err)
	}
	f := accesstest.NewFetcher(access.FetcherOptions{})
	a := f.Fetch(context.Background(), "http", auth)
	if a.Result != policy.Successful || a.Status != 200 || proxyHits.Load() != 0 || o.Hits() != 1 {
		t.Errorf("Fetch(http://%s) with HTTP_PROXY=%s: got Result %q Status %d (Err %v), %d proxy and %d origin requests; want %q 200, 0 and 1",
			auth, proxy.URL, a.Result, a.Status, a.Err, proxyHits.Load(), o.Hits(), policy.Successful)
	}

	// net/http reads the proxy environment once per process, so the fetch
	// above cannot see HTTP_PROXY if anything used http.ProxyFromEnvironment
	// earlier. Check the transport itself too: it must have no proxy.
	p, ok := access.FetcherProxy(f)
	if !ok {
		t.Fatalf("fetcher transport is not an *http.Transport; cannot check its proxy")
	}
	if p != nil {
		t.Errorf("fetcher transport: got a Proxy function, want nil (never a proxy from the environment)")
	}
}

// loopbackHostName returns a host name other than "localhost" whose IPv4
// addresses are all 127.0.0.1, where the test origins listen (such as the
// machine's name in /etc/hosts), or "".
func loopbackHostName() string {
	name, err := os.Hostname()
	if err != nil || name == "" || strings.EqualFold(name, "localhost") {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", name)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	for _, a := range addrs {
		if a.Unmap() != netip.MustParseAddr("127.0.0.1") {
			return ""
		}
	}
	return name
}
