package live

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// serveHub serves h's routes; Close of the hub comes first at cleanup,
// so that the server's Close does not wait for streams.
func serveHub(t *testing.T, h *Hub) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	h.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	return srv
}

// subscription is a stream read in the background.
type subscription struct {
	events chan Event
	cancel context.CancelFunc
	resp   *http.Response
}

// subscribeTo opens srv's stream with query and header, and reads its
// events into a channel.
func subscribeTo(t *testing.T, srv *httptest.Server, query string, header http.Header) *subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+PathEvents+"?"+query, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &subscription{events: make(chan Event, 1024), cancel: cancel, resp: resp}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	if resp.StatusCode != 200 {
		return s
	}
	go func() {
		defer close(s.events)
		_ = ReadEvents(resp.Body, func(ev Event) error { s.events <- ev; return nil })
	}()
	return s
}

// next returns the next event, failing after 10 s.
func (s *subscription) next(t *testing.T) Event {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return Event{}
}

// decisionLine is an audit line of a decision.
func decisionLine(i int, token, decision, reason, url string) []byte {
	return fmt.Appendf(nil, `{"client":"127.0.0.1:5000","method":"GET","url":%q,"decision":%q,"reason":%q,"product_token":%q,"status":200,"i":%d}`,
		url, decision, reason, token, i)
}

func tap(h *Hub, line []byte) [32]byte {
	sum := sha256.Sum256(append(append([]byte(nil), line...), '\n'))
	h.Tap(line, sum)
	return sum
}

// The server applies the filters: a stream carries only the decisions
// that pass, each as the audit line exactly, with its SHA-256, and the
// lost-lines marker whatever the filter.
func TestEventsFilteredOnTheServer(t *testing.T) {
	h := New(Options{MaxSubscribers: 4, Chain: true, Replica: "replica-1"})
	srv := serveHub(t, h)
	s := subscribeTo(t, srv, "token=gptbot&decision=deny&host=example.com", nil)
	hello := s.next(t)
	var hd HelloData
	if hello.Name != EventHello || json.Unmarshal(hello.Data, &hd) != nil || hd.Replica != "replica-1" || hd.Filter["token"][0] != "gptbot" {
		t.Fatalf("first event %s %s, want hello naming the replica and the filter", hello.Name, hello.Data)
	}
	lines := [][]byte{
		decisionLine(1, "GPTBot", "deny", "rule", "https://example.com/a"),
		decisionLine(2, "GPTBot", "allow", "rule", "https://example.com/b"),
		decisionLine(3, "ExampleBot", "deny", "rule", "https://example.com/c"),
		decisionLine(4, "GPTBot", "deny", "unreachable", "http://www.example.com/d"),
		[]byte(`{"time":"2026-11-24T12:00:00Z","level":"warn","message":"audit lines not written","lost_lines":3}`),
		decisionLine(6, "gptbot", "deny", "rule", "example.com:443"),
	}
	var sums [][32]byte
	for _, l := range lines {
		sums = append(sums, tap(h, l))
	}
	for _, want := range []int{0, 4, 5} {
		ev := s.next(t)
		var d DecisionData
		if ev.Name != EventDecision || json.Unmarshal(ev.Data, &d) != nil {
			t.Fatalf("event %s %s, want a decision", ev.Name, ev.Data)
		}
		if string(d.Line) != string(lines[want]) || d.SHA256 != hex.EncodeToString(sums[want][:]) {
			t.Errorf("got line %s (%s), want %s (%x)", d.Line, d.SHA256, lines[want], sums[want])
		}
	}
	select {
	case ev := <-s.events:
		t.Errorf("an event more: %s %s", ev.Name, ev.Data)
	case <-time.After(100 * time.Millisecond):
	}
}

// A bad filter is a 400 naming the parameter.
func TestEventsBadFilter(t *testing.T) {
	srv := serveHub(t, New(Options{MaxSubscribers: 1}))
	for _, q := range []string{"decision=refuse", "host=exa%20mple.com", "recent=-2"} {
		resp, err := http.Get(srv.URL + PathEvents + "?" + q)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		name, _, _ := strings.Cut(q, "=")
		if resp.StatusCode != 400 || !strings.Contains(string(body), name) {
			t.Errorf("%s: %d %q, want 400 naming %s", q, resp.StatusCode, body, name)
		}
	}
}

// At live.max_subscribers one more stream is refused (503, counted);
// once one ends, a new one is served. Close ends every stream.
func TestSubscriberCapAndClose(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := New(Options{MaxSubscribers: 2, Registerer: reg})
	srv := serveHub(t, h)
	a, b := subscribeTo(t, srv, "", nil), subscribeTo(t, srv, "", nil)
	a.next(t)
	b.next(t)
	c := subscribeTo(t, srv, "", nil)
	if c.resp.StatusCode != 503 {
		t.Fatalf("a third stream: %d, want 503", c.resp.StatusCode)
	}
	if n := testutil.ToFloat64(h.m.refused); n != 1 {
		t.Errorf("refused counted %v, want 1", n)
	}
	a.cancel()
	waitFor(t, "a stream ends when its client goes", func() bool { return h.Subscribers() == 1 })
	d := subscribeTo(t, srv, "", nil)
	if d.resp.StatusCode != 200 {
		t.Fatalf("a stream after one ended: %d, want 200", d.resp.StatusCode)
	}
	h.Close()
	for _, s := range []*subscription{b, d} {
		for range s.events { // the stream ends
		}
	}
	waitFor(t, "Close ends every stream", func() bool { return h.Subscribers() == 0 })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

// recent=N starts with the N most recent decisions that pass; a stream
// resumed with Last-Event-ID goes on after that event, and one whose
// event the ring gave up is told how many it skipped.
func TestEventsRecentResumeAndSkipped(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := New(Options{MaxSubscribers: 4, Registerer: reg})
	srv := serveHub(t, h)
	for i := 1; i <= 10; i++ {
		decision := "allow"
		if i%2 == 0 {
			decision = "deny"
		}
		tap(h, decisionLine(i, "GPTBot", decision, "rule", "https://example.com/"))
	}
	s := subscribeTo(t, srv, "decision=deny&recent=2", nil)
	s.next(t) // hello
	first, second := s.next(t), s.next(t)
	if !strings.Contains(string(first.Data), `"i":8`) || !strings.Contains(string(second.Data), `"i":10`) {
		t.Fatalf("recent=2: got %s then %s, want lines 8 and 10", first.Data, second.Data)
	}
	r := subscribeTo(t, srv, "", http.Header{"Last-Event-Id": {first.ID}})
	r.next(t)
	if ev := r.next(t); !strings.Contains(string(ev.Data), `"i":9`) {
		t.Errorf("resumed after %s: got %s, want line 9", first.ID, ev.Data)
	}
	boot, _, _ := strings.Cut(first.ID, "-")
	for i := 11; i < 20_000; i++ { // the ring gives up the first lines
		tap(h, decisionLine(i, "GPTBot", "allow", "rule", "https://example.com/"+strings.Repeat("x", 500)))
	}
	old := subscribeTo(t, srv, "", http.Header{"Last-Event-Id": {boot + "-3"}})
	old.next(t)
	ev := old.next(t)
	oldest, _ := h.ring.Bounds()
	if ev.Name != EventSkipped || string(ev.Data) != fmt.Sprintf(`{"skipped":%d}`, oldest-4) {
		t.Errorf("resumed after line 3, long gone: got %s %s, want skipped %d", ev.Name, ev.Data, oldest-4)
	}
	if n := testutil.ToFloat64(h.m.skipped); n < float64(oldest-4) {
		t.Errorf("skipped counted %v, want at least %d", n, oldest-4)
	}
}

// The page is one document with its script and style inline, allowed by
// their hashes in its Content-Security-Policy and nothing else; a line
// kept is served by its SHA-256, and one not kept says how to grep it.
func TestPageAndLine(t *testing.T) {
	h := New(Options{MaxSubscribers: 1, Chain: true, AuditLog: "/var/log/robotsproxy/audit.log"})
	srv := serveHub(t, h)
	resp, err := http.Get(srv.URL + PathPage)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, m := range regexp.MustCompile(`(?s)<(script|style)>(.*?)</(?:script|style)>`).FindAllStringSubmatch(string(body), -1) {
		if !strings.Contains(csp, "'"+hashSource(m[2])+"'") {
			t.Errorf("inline %s (%d octets) is not allowed by its hash in %q", m[1], len(m[2]), csp)
		}
	}
	for _, want := range []string{"default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %s", csp, want)
		}
	}
	if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).Match(body) || strings.Contains(csp, "unsafe") {
		t.Error("the page loads an outside asset, or its CSP allows unsafe sources")
	}
	line := decisionLine(1, "GPTBot", "deny", "rule", "https://example.com/")
	sum := tap(h, line)
	for _, c := range []struct {
		path, want string
		code       int
	}{
		{PathLine + hex.EncodeToString(sum[:]), string(line) + "\n", 200},
		{PathLine + strings.Repeat("ab", 32), `grep -B1 '"prev":"` + strings.Repeat("ab", 32) + `"' /var/log/robotsproxy/audit.log`, 404},
		{PathLine + "xyz", "64 hex digits", 400},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(b), c.want) {
			t.Errorf("GET %s: %d %q, want %d with %q", c.path, resp.StatusCode, b, c.code, c.want)
		}
	}
}
