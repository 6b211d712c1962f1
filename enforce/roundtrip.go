package enforce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
)

// RoundTrip serves req through the proxy's request path (see the package
// documentation) and returns the origin's response, or the proxy's refusal
// (403 and the others; see Refusal) with a nil error. The response body
// streams from the origin; the request's audit line is written once the
// body has been read to its end or closed, and Body.Close returns after it.
// An error of the wrapped transport is returned as RoundTrip's error (the
// audit line records status 502 and the error, as the proxy's); a request
// cut off returns ErrCutOff. req is not modified; its body is closed, as
// http.RoundTripper requires, also when the request is refused.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || !req.URL.IsAbs() || req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("enforce: a request URL must be absolute (scheme and host)")
	}
	u := &upstream{}
	preq := proxyRequest(req, context.WithValue(req.Context(), upstreamKey{}, u))
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{}), done: make(chan struct{})}
	go t.serve(w, preq)
	<-w.ready
	if w.status == 0 { // the handler returned without an answer
		<-w.done
		if w.cut {
			return nil, w.err
		}
		w.status = http.StatusOK // as net/http answers for a handler that writes nothing
	}
	if err := u.failure(); err != nil {
		pr.Close()
		<-w.done // the proxy's 502 and its audit line
		return nil, err
	}
	return w.response(req, pr), nil
}

// serve runs the proxy's handler for one request and closes the pipe after
// it has returned, that is after the request's audit line. It closes the
// request body, as net/http's server does after a handler.
func (t *Transport) serve(w *pipeWriter, req *http.Request) {
	defer close(w.done)
	defer closeBody(req)
	defer func() {
		if v := recover(); v != nil {
			err := ErrCutOff               // the proxy cut it off: no answer without its line
			if v != http.ErrAbortHandler { //nolint:errorlint // the sentinel itself, as net/http compares it
				// As net/http's server does: log, and end the request.
				err = fmt.Errorf("enforce: the proxy's handler panicked: %v", v)
				t.log.Error().Str("url", req.URL.String()).Str("stack", string(debug.Stack())).Err(err).Msg("request ended")
			}
			w.cut, w.err = true, err
			w.pw.CloseWithError(err)
		}
		w.writeHeaderOnce()
	}()
	t.h.ServeHTTP(w, req)
	w.pw.CloseWithError(w.short(req.Method))
}

// proxyRequest returns a copy of req as the proxy receives it from a
// client: in absolute form (the request target that net/http sends to a
// proxy), with ctx.
func proxyRequest(req *http.Request, ctx context.Context) *http.Request {
	r := req.Clone(ctx)
	r.Body = req.Body // the caller's: read once, by the wrapped transport
	if r.Host == "" {
		r.Host = req.URL.Host
	}
	r.RequestURI = req.URL.Scheme + "://" + req.URL.Host + req.URL.RequestURI()
	if r.Proto == "" {
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	return r
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// upstreamKey is the context key of a request's upstream record.
type upstreamKey struct{}

// upstream records the error of the wrapped transport for one request, so
// that RoundTrip returns it in place of the proxy's 502.
type upstream struct {
	mu  sync.Mutex
	err error
}

func (u *upstream) failure() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// baseTransport is the wrapped transport, recording its errors.
type baseTransport struct{ next http.RoundTripper }

func (b baseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if u, ok := req.Context().Value(upstreamKey{}).(*upstream); ok && err != nil {
		u.mu.Lock()
		u.err = err
		u.mu.Unlock()
	}
	return resp, err
}

// pipeWriter is the http.ResponseWriter the proxy answers one request on:
// the status and header become the response's when first written, the
// body goes through a pipe to the response's Body.
type pipeWriter struct {
	header   http.Header
	pw       *io.PipeWriter
	status   int
	written  int64 // body octets written
	snapshot http.Header
	once     sync.Once
	ready    chan struct{} // closed when the status and header are known
	done     chan struct{} // closed when the handler has returned
	cut      bool          // set before ready or done closes
	err      error         // why it was cut, with cut
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	if status >= 100 && status < 200 && status != http.StatusSwitchingProtocols {
		return // informational: not the response
	}
	w.once.Do(func() {
		w.status, w.snapshot = status, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	n, err := w.pw.Write(b)
	w.written += int64(n)
	return n, err
}

// short returns io.ErrUnexpectedEOF when the body written is shorter than
// its Content-Length (the origin's answer ended early), as a client of
// net/http's server reads it; nil otherwise (an io.EOF for the reader).
func (w *pipeWriter) short(method string) error {
	n, err := strconv.ParseInt(w.header.Get("Content-Length"), 10, 64)
	if err != nil || method == http.MethodHead || w.status == http.StatusNoContent || w.status == http.StatusNotModified ||
		w.written >= n {
		return nil
	}
	return io.ErrUnexpectedEOF
}

// Flush is a no-op: every Write reaches the reader.
func (w *pipeWriter) Flush() {}

// writeHeaderOnce releases RoundTrip for a handler that returns without
// having written anything.
func (w *pipeWriter) writeHeaderOnce() {
	w.once.Do(func() { close(w.ready) })
}

// response is the http.Response for req with body r.
func (w *pipeWriter) response(req *http.Request, r *io.PipeReader) *http.Response {
	h := w.snapshot
	if h == nil {
		h = http.Header{}
	}
	resp := &http.Response{StatusCode: w.status, Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, ContentLength: -1, Request: req,
		Body: &body{r: r, done: w.done}}
	if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		resp.ContentLength = n
	}
	return resp
}

// body is a response body: Close ends the proxy's handler and waits for
// it, so that the audit line is written when Close returns.
type body struct {
	r    *io.PipeReader
	done chan struct{}
}

func (b *body) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *body) Close() error {
	b.r.Close()
	<-b.done
	return nil
}
