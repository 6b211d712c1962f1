package live

import (
	"crypto/sha256"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// heartbeat is how often an idle stream sends a comment, so that a
// subscriber gone away is noticed and proxies keep the stream open.
const heartbeat = 15 * time.Second

// Options configure a Hub.
type Options struct {
	// RingBytes is the size of the ring of recent lines, in octets (at
	// least MinRingBytes). Default rules.DefaultLiveRingBytes.
	RingBytes int
	// MaxSubscribers caps the streams open at once; one more is answered
	// 503. At least 1.
	MaxSubscribers int
	// WriteTimeout is how long a stream's write may take: a subscriber
	// that does not take its events for this long is dropped (counted in
	// robotsproxy_live_subscribers_dropped_total). Default
	// rules.DefaultLiveWriteTimeout.
	WriteTimeout time.Duration
	// Replica names this process in the page and the stream's hello
	// event: a host name, a pod name. A fleet replica shows its own
	// traffic only.
	Replica string
	// AuditLog is the audit log's file name, "" for standard output, for
	// the hint of how to find a line in it.
	AuditLog string
	// Chain reports whether the audit lines are chained, so that each
	// has a SHA-256 (Tap's sum) that names it.
	Chain bool
	// Registerer receives the live view's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Errors of subscribe.
var (
	errFull   = errors.New("the live view has its most subscribers (live.max_subscribers)")
	errClosed = errors.New("the live view is closed: the server is shutting down")
)

// Hub is the live view of one replica's audit log: the ring of recent
// lines that the audit writer fills (Tap) and the streams that follow it
// (ServeHTTP). Its cost while nobody watches is Tap's: a copy into the
// ring under a short lock, no allocation, no wait.
type Hub struct {
	ring *Ring
	opts Options
	// boot names this ring in event ids (BOOT-SEQ), so that a stream
	// resumed after a restart is not taken for one of this ring's.
	boot string
	m    metrics

	mu     sync.Mutex // guards subs' copy on write, n and closed
	subs   atomic.Pointer[[]*subscriber]
	closed bool
	done   chan struct{} // closed by Close
}

// subscriber is one open stream.
type subscriber struct {
	wake chan struct{} // a line was put; capacity 1: wake-ups coalesce
}

// New returns a Hub with an empty ring.
func New(o Options) *Hub {
	if o.RingBytes == 0 {
		o.RingBytes = rules.DefaultLiveRingBytes
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = rules.DefaultLiveWriteTimeout
	}
	o.MaxSubscribers = max(o.MaxSubscribers, 1)
	if o.Now == nil {
		o.Now = time.Now
	}
	h := &Hub{ring: NewRing(o.RingBytes), opts: o, done: make(chan struct{}),
		boot: strconv.FormatInt(o.Now().UnixNano(), 36), m: newMetrics(o.Registerer)}
	h.subs.Store(&[]*subscriber{})
	return h
}

// Tap keeps an audit line in the ring and wakes the streams: the audit
// writer's Options.Tap. It never allocates and never waits for a stream.
func (h *Hub) Tap(line []byte, sum [sha256.Size]byte) {
	h.ring.Put(line, sum)
	for _, s := range *h.subs.Load() {
		select {
		case s.wake <- struct{}{}:
		default: // woken already
		}
	}
}

// subscribe adds a stream, unless the hub has MaxSubscribers or is
// closed.
func (h *Hub) subscribe() (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := *h.subs.Load()
	switch {
	case h.closed:
		return nil, errClosed
	case len(cur) >= h.opts.MaxSubscribers:
		h.m.refused.Inc()
		return nil, errFull
	}
	s := &subscriber{wake: make(chan struct{}, 1)}
	next := append(append(make([]*subscriber, 0, len(cur)+1), cur...), s)
	h.subs.Store(&next)
	h.m.subscribers.Inc()
	return s, nil
}

// unsubscribe removes a stream.
func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := *h.subs.Load()
	next := make([]*subscriber, 0, len(cur))
	for _, o := range cur {
		if o != s {
			next = append(next, o)
		}
	}
	h.subs.Store(&next)
	h.m.subscribers.Dec()
}

// Subscribers is the number of streams open.
func (h *Hub) Subscribers() int { return len(*h.subs.Load()) }

// Close ends every stream and refuses new ones: the server calls it when
// it shuts down, so that no stream holds the admin listener open.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// metrics are the live view's metrics.
type metrics struct {
	subscribers      prometheus.Gauge
	dropped, refused prometheus.Counter
	skipped          prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "robotsproxy_live_subscribers",
			Help: "Streams of the live view open now (/live/events: the page and robotsproxy watch).",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "robotsproxy_live_subscribers_dropped_total",
			Help: "Live view streams dropped because the subscriber did not take its events within the write timeout.",
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "robotsproxy_live_subscribers_refused_total",
			Help: "Live view streams refused (503) because live.max_subscribers were open.",
		}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "robotsproxy_live_skipped_total",
			Help: "Decisions a lagging live view stream skipped: the ring no longer held them when it read on.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.subscribers, m.dropped, m.refused, m.skipped)
	}
	return m
}
