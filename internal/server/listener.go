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
	slots   *connSlots // client.max_connections

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
	t.slots = newConnSlots(maxConns, func() { t.count(proxy.CauseMaxConnections) })
	return t
}

// listen wraps ln: Accept waits while max_connections are open (the client
// waits in the kernel's accept queue) and returns watched connections.
func (t *tracker) listen(ln net.Listener) net.Listener {
	return newLimitListener(ln, t.slots, func(nc net.Conn) net.Conn { return t.add(nc) })
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

// addTunnel watches the connection read inside an intercepted tunnel
// (clientConn.WatchTunnel), an origin-form target after base.
func (t *tracker) addTunnel(nc net.Conn, base string) *clientConn {
	c := newClientConn(nc, t)
	c.base = base
	t.mu.Lock()
	t.conns[c] = struct{}{}
	t.mu.Unlock()
	return c
}

func (t *tracker) remove(c *clientConn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	if c.base != "" { // inside a tunnel: the connection that carries it counts
		return
	}
	t.metrics.AddClientConns(-1)
	t.slots.release()
}

// connSlots caps the connections open on one listener: one token per
// open connection (as golang.org/x/net/netutil.LimitListener holds them),
// and a count of each time Accept had to wait for one.
type connSlots struct {
	sem    chan struct{} // nil: no cap
	waited func()        // called once per Accept that finds no free token
}

// newConnSlots returns slots for at most max open connections (0: no
// cap); waited counts each wait (cause max_connections).
func newConnSlots(max int, waited func()) *connSlots {
	s := &connSlots{waited: waited}
	if max > 0 {
		s.sem = make(chan struct{}, max)
	}
	return s
}

// acquire takes a token, waiting while none is free, until done closes
// (net.ErrClosed).
func (s *connSlots) acquire(done <-chan struct{}) error {
	if s.sem == nil {
		return nil
	}
	select {
	case s.sem <- struct{}{}:
		return nil
	default:
	}
	s.waited()
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-done:
		return net.ErrClosed
	}
}

// release returns a token taken by acquire.
func (s *connSlots) release() {
	if s.sem != nil {
		<-s.sem
	}
}

// limitListener is a net.Listener that holds a token of its slots for
// each open connection: Accept waits while none is free (the client
// waits in the kernel's accept queue). wrap turns each accepted
// connection into one whose Close returns the token, once.
type limitListener struct {
	net.Listener
	slots     *connSlots
	wrap      func(net.Conn) net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, slots *connSlots, wrap func(net.Conn) net.Conn) *limitListener {
	return &limitListener{Listener: ln, slots: slots, wrap: wrap, done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	if err := l.slots.acquire(l.done); err != nil {
		return nil, err
	}
	nc, err := l.Listener.Accept()
	if err != nil {
		l.slots.release()
		return nil, err
	}
	return l.wrap(nc), nil
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
