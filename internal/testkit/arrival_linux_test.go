package testkit

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestArrivedAtWithinTheWrite checks what the timing tests build on: the
// kernel's timestamp of a request is never before the write that sent it
// began (so a gap measured from it is never too long), on the wall clock
// of time.Now. It logs how many arrived after the write returned: loopback
// delivery deferred on a busy machine, which a gap between two arrivals
// can lose.
func TestArrivedAtWithinTheWrite(t *testing.T) {
	const n = 300
	var mu sync.Mutex
	var stamps []time.Time
	srv := NewStampedServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at, ok := ArrivedAt(r)
		if !ok {
			t.Errorf("%s: no kernel timestamp", r.URL.Path)
		}
		mu.Lock()
		stamps = append(stamps, at)
		mu.Unlock()
	}))
	var began, returned []time.Time
	for i := range n {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		b := time.Now()
		_, err = fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
		a := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		began, returned = append(began, b.Round(0)), append(returned, a.Round(0))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.Close()
	}
	late, latest := 0, time.Duration(0)
	for i, at := range stamps {
		if at.Before(began[i]) {
			t.Errorf("request %d: stamped %v before its write began", i, began[i].Sub(at))
		}
		if d := at.Sub(returned[i]); d > 0 {
			late, latest = late+1, max(latest, d)
		}
	}
	t.Logf("%d of %d requests stamped after their write returned (at most %v later)", late, n, latest)
}
