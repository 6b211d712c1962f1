package mitm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elazarl/goproxy"
)

// mitmProxy is a goproxy server intercepting every CONNECT with certs and
// trusting origin's test certificate upstream. Requests reach origin
// whatever host they name.
type mitmProxy struct {
	url  *url.URL
	mu   sync.Mutex
	seen []string // URLs of intercepted requests, as goproxy saw them
}

func startMITMProxy(t *testing.T, certs *Certs, origin *httptest.Server) *mitmProxy {
	t.Helper()
	gp := goproxy.NewProxyHttpServer()
	gp.Logger = log.New(io.Discard, "", 0)
	upstream := x509.NewCertPool()
	upstream.AddCert(origin.Certificate())
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	gp.Tr = &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: upstream},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, origin.Listener.Addr().String())
		},
	}
	p := &mitmProxy{}
	gp.OnRequest().HandleConnectFunc(func(host string, _ *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: certs.TLSConfig}, host
	})
	gp.OnRequest().DoFunc(func(r *http.Request, _ *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		p.mu.Lock()
		p.seen = append(p.seen, r.URL.String())
		p.mu.Unlock()
		return r, nil
	})
	srv := httptest.NewServer(gp)
	t.Cleanup(srv.Close)
	p.url, _ = url.Parse(srv.URL)
	return p
}

func (p *mitmProxy) client(roots *x509.CertPool) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			Proxy:           http.ProxyURL(p.url),
			TLSClientConfig: &tls.Config{RootCAs: roots},
		},
	}
}

func TestGoproxyMITM(t *testing.T) {
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin saw "+r.Host+r.URL.Path)
	}))
	defer origin.Close()
	ca := mustCA(t, time.Now())
	certs := mustCerts(t, ca, CertsOptions{})
	proxy := startMITMProxy(t, certs, origin)
	port := origin.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name     string
		url      string
		dns, ip  string // expected SAN of the certificate the client sees
		verifyAs string
	}{
		{"IP literal origin", origin.URL + "/robots.txt", "", "127.0.0.1", "127.0.0.1"},
		// example.com is in httptest's certificate; the proxy dials origin.
		{"DNS name", "https://example.com:" + strconv.Itoa(port) + "/page", "example.com", "", "example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := proxy.client(ca.CertPool()).Get(tt.url)
			if err != nil {
				t.Fatalf("GET through proxy: %v", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			u, _ := url.Parse(tt.url)
			if resp.StatusCode != 200 || string(body) != "origin saw "+u.Host+u.Path {
				t.Fatalf("status %d, body %q", resp.StatusCode, body)
			}
			leaf := resp.TLS.PeerCertificates[0]
			checkSANs(t, leaf, tt.dns, tt.ip)
			chains, err := verifyLeaf(leaf, ca.CertPool(), tt.verifyAs, time.Now())
			if err != nil || !chains[0][len(chains[0])-1].Equal(ca.Certificate()) {
				t.Errorf("client's certificate does not chain to our CA: %v", err)
			}
			if leaf.Equal(origin.Certificate()) {
				t.Error("client saw the origin's certificate: not intercepted")
			}
			if !proxy.sawURL(tt.url) {
				t.Errorf("proxy handlers did not see %s in plaintext; saw %v", tt.url, proxy.seen)
			}
		})
	}
	// A client that does not trust our CA must fail.
	if _, err := proxy.client(nil).Get(origin.URL); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusting client: err = %v, want a certificate error", err)
	}
	// A second, fresh client for the first host is served from the cache.
	before := certs.Stats()
	resp, err := proxy.client(ca.CertPool()).Get(origin.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := certs.Stats(); s.Signed != before.Signed || s.Hits != before.Hits+1 {
		t.Errorf("stats before %+v, after %+v: want one more hit and no signing", before, s)
	}
}

func (p *mitmProxy) sawURL(u string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.seen {
		if s == u {
			return true
		}
	}
	return false
}
