package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
)

// countingWriter records the status and body size written to the client.
// It passes Hijack and Flush through, which goproxy needs for CONNECT and
// streamed responses.
//
// A body with a declared length can reach the client before the handler
// returns (net/http writes large copies straight to the connection), so
// when the exchange is set the request's audit line is written on the
// read of the body's last octets, before they are sent (see lastRead).
type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	// length is the declared Content-Length, valid when hasLength.
	length    int64
	hasLength bool
	// done is set once the response is written outside goproxy (see
	// Proxy.reject): what goproxy writes after, for the placeholder it was
	// given, is dropped. Next to hasLength: the exchange keeps its size
	// class.
	done bool
	// x and p write the exchange's audit line early; nil: never early.
	x    *exchange
	p    *Proxy
	last lastRead // ReadFrom's source, here so that it is not allocated
}

func (w *countingWriter) WriteHeader(code int) {
	if w.done {
		return
	}
	if w.status == 0 {
		w.status = code
		if cl := w.Header()["Content-Length"]; len(cl) == 1 {
			n, err := strconv.ParseInt(cl[0], 10, 64)
			w.length, w.hasLength = n, err == nil && n >= 0
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// lastRead is the body ReadFrom copies, as read by the connection: on the
// read that brings it to w's declared length, the request's audit line is
// written before those octets are returned (and then sent), so that no
// client has the whole answer before its line. When that write fails
// (audit.on_write_error: refuse), the read fails instead: the answer is
// cut off. A body that ends short or
// fails is no whole answer: ServeHTTP writes its line as before, with
// cut_off when the proxy cut it off.
type lastRead struct {
	r    io.Reader
	w    *countingWriter
	n    int64 // octets read so far
	left int64 // octets the body has left to send
}

func (l *lastRead) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n >= l.left {
		w, sent := l.w, l.w.bytes+l.n
		if w.p.auditOnce(w.x.req, &w.x.st, w.status, sent) != nil && !w.p.opts.AuditContinue {
			return 0, errAuditLine // the client never gets the last octets
		}
	}
	return n, err
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.done {
		return len(b), nil
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// ReadFrom implements io.ReaderFrom so that io.Copy keeps using the
// server's pooled buffers: hiding it costs a 32 KiB allocation per response.
func (w *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.done {
		return io.Copy(io.Discard, r)
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.x != nil && w.hasLength {
		w.last = lastRead{r: r, w: w, left: w.length - w.bytes}
		r = &w.last
	}
	var n int64
	var err error
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{w.ResponseWriter}, r)
	}
	w.bytes += n
	return n, err
}

// Flush implements http.Flusher.
func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack implements http.Hijacker; after it the connection is the caller's.
// The octets the client sent after the request's headers that the server
// already read (a TLS ClientHello written with its CONNECT, the first
// frame written with a WebSocket handshake) are the start of what the
// connection carries next: the connection returned reads them first (see
// prefixConn), so that they are never dropped, whoever reads it.
func (w *countingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil || rw == nil || rw.Reader.Buffered() == 0 {
		return c, rw, err
	}
	ahead, _ := rw.Reader.Peek(rw.Reader.Buffered())
	pc := &prefixConn{Conn: c, prefix: bytes.Clone(ahead)}
	_, _ = rw.Reader.Discard(len(ahead))
	return pc, bufio.NewReadWriter(bufio.NewReader(pc), rw.Writer), nil
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
