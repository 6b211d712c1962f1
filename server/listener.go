package server

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsproxy/robotsproxy/proxy"
)

// tracker owns the proxy listener's client connections: it caps how many
// are open (client.max_connections), counts them and their refusals, writes
// the audit lines of requests the HTTP server refused itself, and closes
// what is left (hijacked CONNECT tunnels) at shutdown.
type tracker struct {
	proxy   *proxy.Proxy
	metrics *proxy.Metrics
	now     func() time.Time
	sem     chan struct{} // one token per open connection; nil: no cap

	stopping atomic.Bool // shutdown began

	mu    sync.Mutex
	conns map[*clientConn]struct{}

	gate    sync.RWMutex // held for reading while an audit line is written
	stopped bool         // under gate: no more audit lines
}

// received reports whether some open connection's request being read
// contains sub: that connection's octets have reached the server.
func (t *tracker) received(sub string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		c.mu.Lock()
		found := strings.Contains(string(c.head), sub)
		c.mu.Unlock()
		if found {
			return true
		}
	}
	return false
}

// newTracker returns a tracker for at most maxConns open connections (0:
// no cap).
func newTracker(p *proxy.Proxy, m *proxy.Metrics, maxConns int, now func() time.Time) *tracker {
	t := &tracker{proxy: p, metrics: m, now: now, conns: make(map[*clientConn]struct{})}
	if maxConns > 0 {
		t.sem = make(chan struct{}, maxConns)
	}
	return t
}

// listen wraps ln: Accept waits while max_connections are open (the client
// waits in the kernel's accept queue) and returns watched connections.
func (t *tracker) listen(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, t: t, done: make(chan struct{})}
}

// refuse writes the audit line of a refused request, unless the tracker is
// stopped.
func (t *tracker) refuse(r proxy.Refusal) {
	t.gate.RLock()
	defer t.gate.RUnlock()
	if !t.stopped {
		t.proxy.AuditRefusal(r)
	}
}

// count counts a refusal that has no audit line (no request was read).
func (t *tracker) count(cause proxy.RefusalCause) {
	t.metrics.CountClientRefusal(cause)
}

// stop makes refuse write nothing more; once it returns, no audit line
// from a connection is being written.
func (t *tracker) stop() {
	t.gate.Lock()
	t.stopped = true
	t.gate.Unlock()
}

// closeAll closes every connection still open: after the HTTP servers are
// closed, those are hijacked ones (CONNECT tunnels).
func (t *tracker) closeAll() int {
	t.mu.Lock()
	list := make([]*clientConn, 0, len(t.conns))
	for c := range t.conns {
		list = append(list, c)
	}
	t.mu.Unlock()
	for _, c := range list {
		_ = c.Close()
	}
	return len(list)
}

// closeReading ends the reads of the connections on which the server waits
// for (the rest of) a request line and headers: at shutdown no handler
// will serve a request not read yet. Their read deadline is set in the
// past rather than the connection closed, so that octets a read already
// returned still reach the server: a request whose headers arrived in
// that read is served and audited as answered; the server closes the
// others, and a request cut short is audited then (reason "shutdown",
// cut_off "shutdown"). Connections whose header section is complete are
// left to the server.
func (t *tracker) closeReading() {
	t.mu.Lock()
	list := make([]*clientConn, 0, len(t.conns))
	for c := range t.conns {
		list = append(list, c)
	}
	t.mu.Unlock()
	for _, c := range list {
		if c.waitingForHeaders() {
			_ = c.SetReadDeadline(aLongTimeAgo.Add(-time.Second))
		}
	}
}

func (t *tracker) add(nc net.Conn) *clientConn {
	c := newClientConn(nc, t)
	t.mu.Lock()
	t.conns[c] = struct{}{}
	t.mu.Unlock()
	t.metrics.AddClientConns(1)
	return c
}

func (t *tracker) remove(c *clientConn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	t.metrics.AddClientConns(-1)
	if t.sem != nil {
		<-t.sem
	}
}

// limitListener is a net.Listener that holds a token of its tracker for
// each open connection (like golang.org/x/net/netutil.LimitListener) and
// counts each time it has to wait for one (cause max_connections).
type limitListener struct {
	net.Listener
	t         *tracker
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	if err := l.acquire(); err != nil {
		return nil, err
	}
	nc, err := l.Listener.Accept()
	if err != nil {
		if l.t.sem != nil {
			<-l.t.sem
		}
		return nil, err
	}
	return l.t.add(nc), nil
}

// acquire takes a connection token, waiting while none is free.
func (l *limitListener) acquire() error {
	if l.t.sem == nil {
		return nil
	}
	select {
	case l.t.sem <- struct{}{}:
		return nil
	default:
	}
	l.t.count(proxy.CauseMaxConnections)
	select {
	case l.t.sem <- struct{}{}:
		return nil
	case <-l.done:
		return net.ErrClosed
	}
}

// Close closes the listener and wakes an Accept waiting for a token; it
// may be called more than once (http.Server.Shutdown is called twice when
// requests are cut off), later calls return nil.
func (l *limitListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.done)
		err = l.Listener.Close()
	})
	return err
}
