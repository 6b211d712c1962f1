package main

import (
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// benchRobots is the origins' robots.txt: every path proxybench asks
// for is allowed, for its User-Agent and any other.
const benchRobots = "User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\n\nUser-agent: ExampleBot\nDisallow: /nope/\n"

// userAgent is the clients' User-Agent: a crawler whose product token
// (ExampleBot) robots.txt names.
const userAgent = "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"

// origins are the sites behind the proxies, in this process: one over
// plain HTTP, one over HTTPS (reached through intercepted tunnels). Each
// serves benchRobots and, at /size/N, N octets of text/html.
type origins struct {
	plain, tls *httptest.Server
	certFile   string // the HTTPS origin's certificate, PEM, for the proxies' roots
	// dials counts the connections the origins accepted: a proxy that
	// keeps its connections to them opens none once warm.
	dials atomic.Int64
	// robots counts the requests for robots.txt.
	robots atomic.Int64
}

func startOrigins(dir string) (*origins, error) {
	o := &origins{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			o.robots.Add(1)
			_, _ = io.WriteString(w, benchRobots)
			return
		}
		n, _ := strconv.Atoi(r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:])
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, _ = w.Write(make([]byte, n))
	})
	quiet := log.New(io.Discard, "", 0)
	o.plain, o.tls = httptest.NewUnstartedServer(h), httptest.NewUnstartedServer(h)
	o.plain.Config.ErrorLog, o.tls.Config.ErrorLog = quiet, quiet
	count := func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			o.dials.Add(1)
		}
	}
	o.plain.Config.ConnState, o.tls.Config.ConnState = count, count
	o.plain.Start()
	o.tls.StartTLS()
	o.certFile = filepath.Join(dir, "origin.pem")
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.tls.Certificate().Raw})
	if err := os.WriteFile(o.certFile, pemCert, 0o644); err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

func (o *origins) close() {
	o.plain.Close()
	o.tls.Close()
}

// tlsPort is the HTTPS origin's port.
func (o *origins) tlsPort() int {
	u, _ := url.Parse(o.tls.URL)
	p, _ := strconv.Atoi(u.Port())
	return p
}
