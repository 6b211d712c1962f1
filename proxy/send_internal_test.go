package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestSendConnReportsTheFirstWrite: a connection with a ticket armed on
// it asks the ticket before its next write and reports the send after
// it; later writes, and writes with nothing armed, pass; a turn that
// ended unsent writes nothing.
func TestSendConnReportsTheFirstWrite(t *testing.T) {
	key := politeness.Key{Token: "Bot", Authority: "http://a.example:80"}
	req := politeness.Request{Key: key, Delay: time.Hour, HasDelay: true}
	tests := []struct {
		name     string
		within   time.Duration
		late     time.Duration // between the admission and the write
		wantErr  bool
		nextWait bool // the key's next turn waits (a send was recorded)
	}{
		{"sent in time", time.Minute, 0, false, true},
		{"not sent within its lease", 20 * time.Millisecond, 40 * time.Millisecond, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sch := politeness.NewLocalScheduler(politeness.LocalOptions{})
			l := politeness.New(politeness.Options{CrawlDelay: true, CountFromSend: true, SendWithin: tt.within, Scheduler: sch})
			tk := l.Admit(context.Background(), req)
			if !tk.Paced() {
				t.Fatalf("ticket not Paced: %+v", tk)
			}
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			go func() { _, _ = io.Copy(io.Discard, b) }()
			c := &sendConn{Conn: a}
			if _, err := c.Write([]byte("idle")); err != nil { // nothing armed
				t.Fatal(err)
			}
			var pt policy.Ticket = tk
			c.armed.Store(&pt)
			time.Sleep(tt.late)
			n, err := c.Write([]byte("GET / HTTP/1.1\r\n"))
			if gotErr := err != nil; gotErr != tt.wantErr || (gotErr && (n != 0 || !errors.Is(err, politeness.ErrTurnLost))) {
				t.Fatalf("armed write: got %d, %v; want error %v (ErrTurnLost, nothing written)", n, err, tt.wantErr)
			}
			if _, err := c.Write([]byte("Host: a.example\r\n\r\n")); err != nil { // not armed again
				t.Fatal(err)
			}
			tk.Release()
			cl, err := sch.Start(context.Background(), key, time.Hour, time.Minute)
			if err != nil || (cl.Wait > 0) != tt.nextWait || cl.Held {
				t.Errorf("next turn: got %+v, %v; want waiting %v, not held", cl, err, tt.nextWait)
			}
		})
	}
}

// TestTraceSendOnOtherConnections: on a transport whose connections
// cannot report their writes, a Paced request counts as sent once the
// origin's first response octet arrives: the key's next turn is the
// delay after that, not held to the claim's lease.
func TestTraceSendOnOtherConnections(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer origin.Close()
	key := politeness.Key{Token: "Bot", Authority: "http://a.example:80"}
	sch := politeness.NewLocalScheduler(politeness.LocalOptions{})
	l := politeness.New(politeness.Options{CrawlDelay: true, CountFromSend: true, SendWithin: time.Hour, Scheduler: sch})
	tk := l.Admit(context.Background(), politeness.Request{Key: key, Delay: time.Minute, HasDelay: true})
	req, _ := http.NewRequest(http.MethodGet, origin.URL, nil)
	client := &http.Client{Transport: &http.Transport{}}
	var pt policy.Ticket = tk
	resp, err := client.Do(traceSend(req, &pt))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cl, err := sch.Start(context.Background(), key, time.Minute, time.Hour)
	if err != nil || cl.Held || cl.Wait <= 0 || cl.Wait > time.Minute {
		t.Errorf("next turn after the response: got %+v, %v; want a wait of at most 1m, not held", cl, err)
	}
	tk.Release()
}
