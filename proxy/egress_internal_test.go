package proxy

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/elazarl/goproxy"

	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/policy"
)

// A request that reaches the egress steps without the exchange toEgress
// gives it (who it is sent for, whether it may be signed and paid) is not
// sent: the origin sees nothing.
func TestEgressWithoutExchangeFailsClosed(t *testing.T) {
	var hits atomic.Int64
	o := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer o.Close()
	tr := NewTransport(TransportOptions{AllowPrivate: true})
	p := New(Options{Policy: policy.New(policy.Options{}), Transport: tr,
		Egress: &payments.Transport{Next: tr, Ledger: &payments.Local{}}})
	req := httptest.NewRequest(http.MethodGet, o.URL+"/page", nil)
	if _, err := p.roundTripEgress(req, &goproxy.ProxyCtx{}); !errors.Is(err, errNoExchange) {
		t.Errorf("plain: %v, want errNoExchange", err)
	}
	if hits.Load() != 0 {
		t.Errorf("the origin got %d requests, want none", hits.Load())
	}
}
