package proxy

import (
	"net/http"
	"sync"
	"time"
)

// exchange is one ServeHTTP call, in one allocation: the flight that
// shutdown sees, the writer that counts what the client is sent, and the
// request's state. goproxy passes the request it was given to onRequest and
// onConnect, which find the exchange by it in the flights registry and put
// its state on ProxyCtx.UserData: nothing is copied into a request context.
type exchange struct {
	flight
	w   countingWriter
	st  state
	req *http.Request // its key in the flights registry
}

// flights registers the ServeHTTP calls in progress by the request goproxy
// serves. The zero value is ready to use.
type flights struct {
	mu  sync.Mutex
	set map[*http.Request]*exchange
}

// begin registers a request whose handler starts, and tells the server's
// connection watcher (if any) that a handler is serving the connection.
// parent is the CONNECT's state of a request read inside an intercepted
// tunnel, nil outside one.
func (p *Proxy) begin(w http.ResponseWriter, r *http.Request, start time.Time, parent *state) *exchange {
	if o := connObserver(r.Context()); o != nil {
		o.Serving()
	}
	x := &exchange{flight: flight{client: r.RemoteAddr, method: r.Method, url: requestURL(r, parent != nil),
		userAgent: r.Header.Get("User-Agent"), start: start}, req: r}
	x.w.ResponseWriter = w
	x.st.start, x.st.target, x.st.w = start, x.flight.url, &x.w
	if parent != nil {
		x.st.parent, x.st.pin = parent, parent.pin
	}
	x.w.x, x.w.p = x, p
	p.flights.mu.Lock()
	if p.flights.set == nil {
		p.flights.set = make(map[*http.Request]*exchange)
	}
	p.flights.set[r] = x
	p.flights.mu.Unlock()
	return x
}

// end unregisters a request whose handler returns (after its audit line,
// written by the handler or by Abandon) and gives back its politeness slot
// if ServeHTTP has not (a handler cut short by Abandon). Slots are
// released outside the flight's lock, not with the line: a shared gate's
// release is a Redis call.
func (p *Proxy) end(r *http.Request, x *exchange) {
	x.st.release()
	p.flights.mu.Lock()
	delete(p.flights.set, x.req)
	p.flights.mu.Unlock()
	if o := connObserver(r.Context()); o != nil {
		o.Served()
	}
}

// rekey files x under r, the request goproxy will serve, when that is a
// copy of the one x was registered with.
func (f *flights) rekey(x *exchange, r *http.Request) {
	if x.req == r {
		return
	}
	f.mu.Lock()
	delete(f.set, x.req)
	f.set[r] = x
	x.req = r
	f.mu.Unlock()
}

// stateOf returns the state of the request that ServeHTTP handed to
// goproxy, or a new state when req is not one (goproxy made it).
func (p *Proxy) stateOf(req *http.Request) *state {
	p.flights.mu.Lock()
	x := p.flights.set[req]
	p.flights.mu.Unlock()
	if x == nil {
		return &state{start: p.opts.Now()}
	}
	return &x.st
}
