package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// target is what the load generator asks a proxy for: a plain-HTTP
// request in absolute form, or (connect set) a request in origin form
// inside a CONNECT tunnel the proxy intercepts, over TLS trusted by
// tlsConfig.
type target struct {
	proxy     string // the proxy's address, host:port
	connect   string // the tunnel's authority; "" for plain HTTP
	tlsConfig *tls.Config
	request   []byte // one request, sent as is on each connection
}

// newTarget returns the target of GET url (http:// or https://) through
// the proxy at addr, with User-Agent ua. An https URL is asked inside an
// intercepted tunnel whose TLS is verified against tlsConfig.
func newTarget(addr, rawURL, ua string, tlsConfig *tls.Config) (*target, error) {
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	t := &target{proxy: addr}
	form := rawURL // absolute form, to the proxy
	if req.URL.Scheme == "https" {
		t.connect, t.tlsConfig = req.URL.Host, tlsConfig
		form = req.URL.RequestURI() // origin form, inside the tunnel
	}
	t.request = fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\n\r\n", form, req.URL.Host, ua)
	return t, nil
}

// conn is one keep-alive client connection.
type conn struct {
	c  net.Conn
	br *bufio.Reader
}

// dial opens a connection to t's proxy, through a CONNECT tunnel and its
// TLS handshake when t asks for one.
func (t *target) dial() (*conn, error) {
	c, err := net.DialTimeout("tcp", t.proxy, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if t.connect == "" {
		return &conn{c: c, br: bufio.NewReaderSize(c, 16<<10)}, nil
	}
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\n\r\n", t.connect, t.connect, userAgent); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s: %w", t.connect, err)
	}
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s: status %d", t.connect, resp.StatusCode)
	}
	if br.Buffered() > 0 {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s: octets after the answer", t.connect)
	}
	cfg := t.tlsConfig.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	cfg.ServerName, _, _ = net.SplitHostPort(t.connect)
	tc := tls.Client(c, cfg)
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, fmt.Errorf("TLS in the tunnel to %s: %w", t.connect, err)
	}
	return &conn{c: tc, br: bufio.NewReaderSize(tc, 16<<10)}, nil
}

// errClosed is a response that ends its connection: the caller dials
// again.
var errClosed = errors.New("the proxy closes the connection")

// do sends t's request on c and reads the whole response; it must be
// 200.
func (c *conn) do(req []byte) error {
	if _, err := c.c.Write(req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		return err
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("status %d", resp.StatusCode)
	case resp.Close:
		return errClosed
	}
	return nil
}

// loadResult is what one load run measured.
type loadResult struct {
	requests int64
	elapsed  time.Duration
	// latencies are every request's, in no order; nil unless asked for.
	latencies []time.Duration
	redials   int64 // connections the proxy closed and the client dialled again
}

// reqPerSec is the throughput of r.
func (r loadResult) reqPerSec() float64 {
	return float64(r.requests) / r.elapsed.Seconds()
}

// percentile returns the p-th percentile (0 < p < 100) of r's latencies.
func (r loadResult) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

// loadRun describes one run of the load generator: conns connections
// send requests back to back until count requests were sent (count > 0)
// or for duration, after warm requests on each connection.
type loadRun struct {
	conns     int
	warm      int
	count     int64
	duration  time.Duration
	latencies bool
	// settled, when set, is asked after each pass of warm requests on
	// every connection: the warm-up goes on (up to 10 passes) until it
	// reports true.
	settled func() bool
	// between, when set, runs once the connections are warm, just
	// before the measured requests, and after, just after the last of
	// them (CPU and counters are read there).
	between, after func()
}

// run runs l against t.
func (l loadRun) run(t *target) (loadResult, error) {
	conns := make([]*conn, l.conns)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.c.Close()
			}
		}
	}()
	var redials atomic.Int64
	send := func(i int) error {
		for {
			if conns[i] == nil {
				c, err := t.dial()
				if err != nil {
					return err
				}
				conns[i] = c
			}
			err := conns[i].do(t.request)
			if err == nil {
				return nil
			}
			conns[i].c.Close()
			conns[i] = nil
			if err != errClosed {
				return err
			}
			redials.Add(1)
			return nil // the request was answered
		}
	}
	// One request first, alone, until it is answered 200: robots.txt
	// fetched and cached before the connections pile up.
	for deadline := time.Now().Add(3 * time.Minute); ; {
		err := send(0)
		if err == nil {
			break
		}
		if time.Now().After(deadline) || !strings.HasPrefix(err.Error(), "status ") {
			return loadResult{}, err
		}
		time.Sleep(time.Second)
	}
	var wg sync.WaitGroup
	errs := make([]error, l.conns)
	for pass := 0; pass < 10; pass++ { // warm: connections, tunnels, certificates, robots.txt
		for i := range l.conns {
			wg.Go(func() {
				for range l.warm {
					if errs[i] = send(i); errs[i] != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		if err := firstError(errs); err != nil {
			return loadResult{}, err
		}
		if l.settled == nil || l.settled() {
			break
		}
	}
	if l.between != nil {
		l.between()
	}
	redials.Store(0)
	var next atomic.Int64
	lat := make([][]time.Duration, l.conns)
	start := time.Now()
	deadline := start.Add(l.duration)
	for i := range l.conns {
		wg.Go(func() {
			for {
				if l.count > 0 && next.Add(1) > l.count {
					return
				}
				t0 := time.Now()
				if l.count == 0 && !t0.Before(deadline) {
					return
				}
				if errs[i] = send(i); errs[i] != nil {
					return
				}
				if l.latencies {
					lat[i] = append(lat[i], time.Since(t0))
				}
				if l.count == 0 {
					next.Add(1)
				}
			}
		})
	}
	wg.Wait()
	res := loadResult{elapsed: time.Since(start), redials: redials.Load()}
	if l.after != nil {
		l.after()
	}
	if err := firstError(errs); err != nil {
		return loadResult{}, err
	}
	res.requests = next.Load()
	if l.count > 0 {
		res.requests = l.count
	}
	if l.latencies {
		res.latencies = slices.Concat(lat...)
	}
	return res, nil
}

// firstError is the first of errs that is not nil, with the number of
// the others.
func firstError(errs []error) error {
	var first error
	n := 0
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("%w (and %d more connections failed)", first, n-1)
	}
	return first
}
