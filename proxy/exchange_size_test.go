package proxy

import (
	"testing"
	"unsafe"
)

// TestExchangeSizeClass: a request's exchange (its state, decision,
// counting writer and flight, allocated once per request) fits Go's
// 896-octet size class with its 8-octet malloc header. One field more
// puts every request in the 1,024-octet class: 128 octets per request,
// which BenchmarkServeHTTP's B/op shows. Pack new fields next to the
// flags, or make room.
func TestExchangeSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(exchange{}); n > 896-8 {
		t.Errorf("exchange is %d octets, more than the %d that fit the 896-octet size class", n, 896-8)
	}
}
