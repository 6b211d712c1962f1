package access

import (
	"net/http"
	"net/url"
)

// FetcherProxy returns the proxy function of f's HTTP transport, and false
// when the transport is not an *http.Transport, for tests that check the
// fetcher never uses the environment's proxy.
func FetcherProxy(f *Fetcher) (func(*http.Request) (*url.URL, error), bool) {
	tr, ok := f.client.Transport.(*http.Transport)
	if !ok {
		return nil, false
	}
	return tr.Proxy, true
}
