package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// countingWriter records the status and body size written to the client.
// It passes Hijack and Flush through, which goproxy needs for CONNECT and
// streamed responses.
type countingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	// done is set once the response is written outside goproxy (see
	// Proxy.reject): what goproxy writes after, for the placeholder it was
	// given, is dropped.
	done bool
}

func (w *countingWriter) WriteHeader(code int) {
	if w.done {
		return
	}
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
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
func (w *countingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
