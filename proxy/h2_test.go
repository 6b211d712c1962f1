package proxy_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/proxy"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Client is a client of h's proxy that offers h2 inside its tunnels
// (and uses it when the proxy agrees), trusting ca only.
func h2Client(h *harness, ca *mitm.CA) *http.Client {
	return &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(h.proxyURL), TLSClientConfig: &tls.Config{RootCAs: ca.CertPool()},
			ForceAttemptHTTP2: true},
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// newH2Origin is a TLS origin that offers h2 by ALPN and records the
// protocol of each request it gets (robots.txt fetches excepted).
func newH2Origin(t *testing.T, robots http.HandlerFunc) (*origin, func() []string) {
	t.Helper()
	o := &origin{}
	var mu sync.Mutex
	var protos []string
	inner := o.handler(robots)
	o.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			mu.Lock()
			protos = append(protos, r.Proto)
			mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	}))
	o.EnableHTTP2 = true
	o.StartTLS()
	t.Cleanup(o.Close)
	return o, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), protos...)
	}
}

// send sends method target with the User-Agent ua through client and
// returns the response, its body read.
func send(t *testing.T, client *http.Client, method, target, ua string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, target, nil)
	req.Header.Set("User-Agent", ua)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// comparable is an audit line without what differs between two requests
// alike: the time, the client's port, the duration, the cache state.
func comparable(l map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range l {
		switch k {
		case "time", "client", "duration_ms", "cache", "protocol":
		default:
			c[k] = v
		}
	}
	return c
}

// TestInterceptHTTP2: a client that offers h2 inside an intercepted
// tunnel speaks HTTP/2 there, and each of its streams is decided, refused
// and audited exactly as the same request over HTTP/1.1: the same status,
// refusal fields, body and audit line, but for its protocol field. The
// proxy speaks HTTP/2 to an origin that offers it.
func TestInterceptHTTP2(t *testing.T) {
	o, protos := newH2Origin(t, serveRobots("User-agent: *\nDisallow: /private\n"))
	h, ca, _ := interceptHarness(t, originTLS(o), o, nil)
	clients := map[string]*http.Client{"HTTP/1.1": h.client, "HTTP/2.0": h2Client(h, ca)}
	type answer struct {
		status int
		reason string
		body   string
	}
	got := map[string][]answer{}
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		for _, path := range []string{"/page", "/private/x"} {
			resp, body := send(t, clients[proto], "GET", o.URL+path, "ExampleBot/1.0")
			if resp.Proto != proto {
				t.Errorf("%s %s: answered over %s", proto, path, resp.Proto)
			}
			got[proto] = append(got[proto], answer{resp.StatusCode, resp.Header.Get(proxy.HeaderReason), body})
		}
	}
	want := []answer{{200, "", "origin:GET:/page"}, {403, "rule", ""}}
	for proto, answers := range got {
		for i, a := range answers {
			if a.status != want[i].status || a.reason != want[i].reason || want[i].body != "" && a.body != want[i].body {
				t.Errorf("%s: answer %d is %v, want %v", proto, i, a, want[i])
			}
		}
		if !strings.Contains(answers[1].body, "Disallow: /private") || answers[1].body != got["HTTP/1.1"][1].body {
			t.Errorf("%s: the 403's body %q, want the rule, as over HTTP/1.1", proto, answers[1].body)
		}
	}
	if n := o.Count("/private/x"); n != 0 {
		t.Errorf("the origin got /private/x %d times", n)
	}
	if p := protos(); len(p) != 2 || p[0] != "HTTP/2.0" || p[1] != "HTTP/2.0" {
		t.Errorf("the origin got requests over %v, want HTTP/2.0 for both", p)
	}

	var inner []map[string]any
	for deadline := time.Now().Add(5 * time.Second); len(inner) < 4 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		inner = inner[:0]
		for _, l := range h.audit.Lines(t) {
			if l["intercepted"] == true {
				inner = append(inner, l)
			}
		}
	}
	if len(inner) != 4 {
		t.Fatalf("audit: %d lines of requests inside tunnels, want 4: %v", len(inner), inner)
	}
	for i := range 2 {
		h1, h2 := inner[i], inner[i+2]
		if h1["protocol"] != "HTTP/1.1" || h2["protocol"] != "HTTP/2" {
			t.Errorf("protocol fields %v and %v, want HTTP/1.1 and HTTP/2", h1["protocol"], h2["protocol"])
		}
		a, b := comparable(h1), comparable(h2)
		for k, v := range a {
			if !reflect.DeepEqual(b[k], v) && k != "robots_fetched_at" {
				t.Errorf("line %d: %s is %v over HTTP/1.1, %v over HTTP/2", i, k, v, b[k])
			}
		}
		if len(a) != len(b) {
			t.Errorf("line %d: fields %v over HTTP/1.1, %v over HTTP/2", i, h1, h2)
		}
	}
}

// h2Conn opens an intercepted tunnel to o through h's proxy, negotiates
// h2 and sends the client preface and an empty SETTINGS: it returns a
// framer on the connection and the server's first SETTINGS.
func h2Framer(t *testing.T, h *harness, ca *mitm.CA, o *origin) (*http2.Framer, map[http2.SettingID]uint32) {
	t.Helper()
	c, _ := openTunnel(t, h, o)
	tc := tls.Client(c, &tls.Config{RootCAs: ca.CertPool(), ServerName: "127.0.0.1", NextProtos: []string{"h2"}})
	if err := tc.Handshake(); err != nil || tc.ConnectionState().NegotiatedProtocol != "h2" {
		t.Fatalf("TLS handshake: %v, protocol %q, want h2", err, tc.ConnectionState().NegotiatedProtocol)
	}
	if _, err := io.WriteString(tc, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(tc, tc)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok {
		t.Fatalf("the server's first frame is %v, want SETTINGS", f)
	}
	settings := map[http2.SettingID]uint32{}
	_ = sf.ForeachSetting(func(s http2.Setting) error { settings[s.ID] = s.Val; return nil })
	return fr, settings
}

// goAway reads frames until a GOAWAY and returns it, nil when the
// connection ends first.
func goAway(fr *http2.Framer) *http2.GoAwayFrame {
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return nil
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			return g
		}
	}
}

// TestH2Bounds: an HTTP/2 connection inside an intercepted tunnel is
// bounded: the proxy announces client.h2_max_concurrent_streams and a
// header list size, closes a connection that resets streams faster than
// client.h2_max_resets_per_second with GOAWAY ENHANCE_YOUR_CALM (the rapid
// reset attack, CVE-2023-44487), counted h2_resets, and closes an idle
// one with GOAWAY after client.idle_timeout.
func TestH2Bounds(t *testing.T) {
	o := newTLSOrigin(t, serveRobots("User-agent: *\nAllow: /\n"))
	start := func(streams, resets int) (*harness, *mitm.CA) {
		h, ca, _ := interceptHarnessWith(t, originTLS(o), o, nil, func(po *proxy.Options) {
			po.H2MaxConcurrentStreams, po.H2MaxResetsPerSecond, po.IdleTimeout = streams, resets, 500*time.Millisecond
			po.MaxHeaderBytes = 16 << 10
		})
		return h, ca
	}
	host := strings.TrimPrefix(o.URL, "https://")
	// resetMany opens 200 streams and resets each at once, then pings:
	// it returns the GOAWAY the proxy sent, nil when it answered the ping.
	resetMany := func(fr *http2.Framer) *http2.GoAwayFrame {
		var block bytes.Buffer
		enc := hpack.NewEncoder(&block)
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", host}, {":path", "/x"}, {"user-agent", "ExampleBot/1.0"}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		go func() {
			for id := uint32(1); id < 2*200; id += 2 {
				if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}) != nil ||
					fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
					return
				}
			}
			_ = fr.WritePing(false, [8]byte{1})
		}()
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("the connection ended without GOAWAY or an answer to the ping: %v", err)
			}
			switch f := f.(type) {
			case *http2.GoAwayFrame:
				return f
			case *http2.PingFrame:
				if f.IsAck() {
					return nil
				}
			}
		}
	}

	t.Run("settings", func(t *testing.T) {
		h, ca := start(7, 0)
		_, s := h2Framer(t, h, ca, o)
		if s[http2.SettingMaxConcurrentStreams] != 7 {
			t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS %d, want client.h2_max_concurrent_streams (7)", s[http2.SettingMaxConcurrentStreams])
		}
		if n := s[http2.SettingMaxHeaderListSize]; n < 2*(16<<10) || n > 2*(20<<10)+1024 {
			t.Errorf("SETTINGS_MAX_HEADER_LIST_SIZE %d, want about twice client.max_header_bytes with its slack", n)
		}
	})
	t.Run("rapid reset", func(t *testing.T) {
		h, ca := start(100, 20)
		fr, _ := h2Framer(t, h, ca, o)
		if g := resetMany(fr); g == nil || g.ErrCode != http2.ErrCodeEnhanceYourCalm {
			t.Fatalf("200 streams reset at once: GOAWAY %v, want ENHANCE_YOUR_CALM", g)
		}
		if got := h.counter(t, "robotsproxy_client_refusals_total", "h2_resets"); got != 1 {
			t.Errorf("robotsproxy_client_refusals_total{cause=h2_resets} = %v, want 1", got)
		}
	})
	t.Run("resets within the limit", func(t *testing.T) {
		h, ca := start(100, 1000)
		fr, _ := h2Framer(t, h, ca, o)
		if g := resetMany(fr); g != nil {
			t.Fatalf("200 streams reset at once, within client.h2_max_resets_per_second: GOAWAY %v, want none", g)
		}
	})
	t.Run("idle", func(t *testing.T) {
		h, ca := start(0, 0)
		fr, _ := h2Framer(t, h, ca, o)
		began := time.Now()
		g := goAway(fr)
		if g == nil || g.ErrCode != http2.ErrCodeNo || time.Since(began) > 3*time.Second {
			t.Errorf("an idle connection: GOAWAY %v after %s, want NO_ERROR after client.idle_timeout", g, time.Since(began))
		}
	})
}
