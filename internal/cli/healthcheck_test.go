package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRunHealthcheckWait: with -wait, healthcheck probes until the
// endpoint answers 200 (a serve that starts later), or fails with exit 1
// once the wait is over.
func TestRunHealthcheckWait(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens until the server below starts
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ready\n") })}
	go func() {
		time.Sleep(300 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return // the port was taken meanwhile: the probe below fails and says so
		}
		srv.Serve(l)
	}()
	defer srv.Close()
	var stdout, printed bytes.Buffer
	code := exitCode(run(context.Background(), []string{"healthcheck", "-addr", addr, "-wait", "30s"}, nil, &stdout, io.Discard), &printed)
	if code != 0 || !strings.Contains(stdout.String(), "/readyz: ready") {
		t.Errorf("healthcheck -wait 30s with a server starting after 300ms: exit %d, %q %q; want 0 and ready", code, stdout.String(), printed.String())
	}

	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := l.Addr().String()
	l.Close()
	start := time.Now()
	printed.Reset()
	code = exitCode(run(context.Background(), []string{"healthcheck", "-addr", free, "-wait", "500ms"}, nil, io.Discard, io.Discard), &printed)
	if code != 1 || time.Since(start) < 300*time.Millisecond || !strings.Contains(printed.String(), "connection refused") {
		t.Errorf("healthcheck -wait 500ms with nothing listening: exit %d after %v, %q; want 1 after the wait, naming the refusal", code, time.Since(start), printed.String())
	}
}
