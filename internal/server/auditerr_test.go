package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// TestAuditErrorsRateLimited: at most one operational line per second;
// the next one counts the failures left unreported.
func TestAuditErrorsRateLimited(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	a := &auditErrors{log: zerolog.New(&buf), now: func() time.Time { return now }, interval: time.Second}
	steps := []struct {
		advance time.Duration
		lines   int // lines written so far
	}{
		{0, 1}, {100 * time.Millisecond, 1}, {500 * time.Millisecond, 1}, {399 * time.Millisecond, 1},
		{time.Millisecond, 2}, {10 * time.Millisecond, 2}, {2 * time.Second, 3},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		a.report(syscall.ENOSPC)
		if got := strings.Count(buf.String(), "\n"); got != s.lines {
			t.Fatalf("after report %d: %d lines, want %d:\n%s", i, got, s.lines, buf.String())
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for i, want := range []string{`"suppressed":0`, `"suppressed":3`, `"suppressed":1`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "no space left on device") {
			t.Errorf("line %d = %s, want %s and the error", i, lines[i], want)
		}
	}
}

// failingOut is an audit output whose writes fail while fail is set.
type failingOut struct {
	fail atomic.Bool
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (o *failingOut) Write(p []byte) (int, error) {
	if o.fail.Load() {
		return 0, syscall.ENOSPC
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *failingOut) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// TestAuditWriteErrorsServer: with the default audit.on_write_error
// (refuse), a request whose line fails after it was forwarded is cut off,
// the next ones are answered 503 audit-unavailable without reaching the
// origin, /readyz is not ready, the metrics count, the operational log
// gets one line per second at most; once the log takes writes again, the
// first request, or /readyz, writes the lost_lines marker and the request
// is served.
func TestAuditWriteErrorsServer(t *testing.T) {
	var hits atomic.Int32
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			hits.Add(1)
		}
		_, _ = io.WriteString(w, "hello\n")
	}))
	defer origin.Close()
	cfg := config.Default()
	cfg.AllowPrivate, cfg.AdminListen = true, ""
	out := &failingOut{}
	var log testkit.AuditSink
	s, err := New(cfg, out, zerolog.New(&log))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln, nil) }()
	defer func() { cancel(); <-done }()
	proxyURL, _ := url.Parse("http://" + ln.Addr().String())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), DisableKeepAlives: true}, Timeout: 10 * time.Second}
	get := func(path string) (int, string, error) {
		resp, err := client.Get(origin.URL + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"), err
	}
	ready := func() (int, string) {
		rec := httptest.NewRecorder()
		s.admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	metric := (&testServer{s: s}).metric

	if code, _, err := get("/a"); err != nil || code != 200 {
		t.Fatalf("healthy: %d, %v", code, err)
	}
	waitReady(t, ready)

	out.fail.Store(true)
	if code, _, err := get("/b"); err == nil {
		t.Fatalf("forwarded while the log fails: got a whole answer %d, want the connection cut", code)
	}
	if hits.Load() != 2 {
		t.Fatalf("origin hits = %d, want 2", hits.Load())
	}
	for _, p := range []string{"/c", "/d", "/e"} {
		code, reason, err := get(p)
		if err != nil || code != http.StatusServiceUnavailable || reason != "audit-unavailable" {
			t.Fatalf("GET %s while failing: %d %q %v, want 503 audit-unavailable", p, code, reason, err)
		}
	}
	if hits.Load() != 2 {
		t.Errorf("origin hits = %d, want 2: requests were forwarded while the audit log failed", hits.Load())
	}
	if code, body := ready(); code != http.StatusServiceUnavailable || !strings.Contains(body, "audit") {
		t.Errorf("/readyz while failing = %d %q, want 503 naming the audit log", code, body)
	}
	if n := metric(t, "robotsproxy_audit_write_errors_total"); n != 4 {
		t.Errorf("robotsproxy_audit_write_errors_total = %v, want 4", n)
	}
	if n := metric(t, "robotsproxy_audit_lost_lines_total"); n != 4 {
		t.Errorf("robotsproxy_audit_lost_lines_total = %v, want 4", n)
	}
	if n := strings.Count(log.String(), "audit log write failed"); n != 1 {
		t.Errorf("%d operational error lines within a second, want 1:\n%s", n, log.String())
	}

	out.fail.Store(false)
	// The first request after recovery tries the log again (the marker is
	// written), and is served with its line.
	if code, _, err := get("/f"); err != nil || code != 200 {
		t.Errorf("first request after recovery: %d %v, want 200", code, err)
	}
	if hits.Load() != 3 {
		t.Errorf("origin hits = %d, want 3: the first request after recovery was not forwarded", hits.Load())
	}
	if code, _ := ready(); code != http.StatusOK {
		t.Errorf("/readyz after recovery = %d, want 200", code)
	}
	// /readyz itself tries a failing log again: a proxy sent no requests
	// while it is not ready becomes ready once the log takes writes.
	out.fail.Store(true)
	if code, _, err := get("/g"); err == nil {
		t.Fatalf("forwarded while the log fails: got a whole answer %d, want the connection cut", code)
	}
	if code, _ := ready(); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while failing again = %d, want 503", code)
	}
	out.fail.Store(false)
	if code, _ := ready(); code != http.StatusOK {
		t.Errorf("/readyz once the log takes writes, with no request = %d, want 200", code)
	}
	logged := out.String()
	if n := strings.Count(logged, `"lost_lines":`); n != 2 {
		t.Errorf("%d lost_lines markers, want 2 (one per recovery):\n%s", n, logged)
	}
	if n := metric(t, "robotsproxy_audit_write_errors_total"); n != 5 {
		t.Errorf("robotsproxy_audit_write_errors_total = %v, want 5 (the lines' writes; tries again are not counted)", n)
	}
	for _, want := range []string{`"lost_lines":4`, `"lost_lines":1`, `"on_write_error":"refuse"`, "/f", "/a"} {
		if !strings.Contains(logged, want) {
			t.Errorf("audit log lacks %s:\n%s", want, logged)
		}
	}
	for _, lost := range []string{"/b", "/c", "/d", "/e", "/g"} {
		if strings.Contains(logged, origin.URL+lost+`"`) {
			t.Errorf("audit log holds the lost line of %s", lost)
		}
	}
}

// waitReady waits for /readyz to say ready (the listeners open).
func waitReady(t *testing.T, ready func() (int, string)) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := ready()
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %q", code, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCheckpointKeyFile: the checkpoint key file is read at start; an
// empty or missing one stops the start with an error naming the key, and
// the key's contents appear in no error.
func TestCheckpointKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, key string
		wantErr   bool
	}{
		{"key", write("key", "s3cret-key\n"), false},
		{"empty", write("empty", " \n"), true},
		{"missing", dir + "/none", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Log.File = dir + "/audit-" + tc.name + ".log"
			cfg.Audit.CheckpointFile = dir + "/cp-" + tc.name
			cfg.Audit.CheckpointHMACKeyFile = tc.key
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			w, closeFn, err := auditWriter(cfg, io.Discard, nil, nil)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "audit.checkpoint_hmac_key_file") {
					t.Fatalf("got %v, want an error naming audit.checkpoint_hmac_key_file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("{\"a\":1}\n")); err != nil {
				t.Fatal(err)
			}
			if err := closeFn(); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(cfg.Audit.CheckpointFile)
			if !bytes.Contains(raw, []byte(`"hmac":"`)) || bytes.Contains(raw, []byte("s3cret")) {
				t.Errorf("checkpoint log %q: want one signed checkpoint, without the key", raw)
			}
		})
	}
}
