package testkit

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// NewSizedOrigin starts a counting origin (an HTTPS one when useTLS) for
// benchmarks: /robots.txt answers robots, and a path ending in /N (such
// as /size/100) answers N zero octets as text/html with a Content-Length.
func NewSizedOrigin(t testing.TB, robots string, useTLS bool) *Origin {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, robots)
			return
		}
		n, _ := strconv.Atoi(r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:])
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, _ = io.Copy(w, io.LimitReader(zeros{}, int64(n)))
	})
	if useTLS {
		return NewTLSOrigin(t, h)
	}
	return NewOrigin(t, h)
}

// zeros reads as an endless run of zero octets.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
