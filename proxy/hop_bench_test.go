package proxy

import (
	"net/http"
	"testing"
)

// BenchmarkPrepare measures hop-by-hop cleaning of a typical request and
// response, which carry no hop-by-hop field.
func BenchmarkPrepare(b *testing.B) {
	req := &http.Request{Header: http.Header{"User-Agent": {"ExampleBot/1.0"}, "Accept": {"*/*"},
		"Accept-Encoding": {"gzip"}}}
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"},
		"Content-Length": {"100"}, "Date": {"Sun, 22 Nov 2026 23:18:40 GMT"}, "Server": {"nginx"}}}
	b.ReportAllocs()
	for b.Loop() {
		prepareOutbound(req)
		prepareInbound(resp)
	}
}
