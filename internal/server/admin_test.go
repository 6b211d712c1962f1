package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsproxy/robotsproxy/internal/live"
)

// TestAdminIndex: GET / on the admin listener lists every endpoint it
// serves, and each one listed answers; other paths are 404.
func TestAdminIndex(t *testing.T) {
	ready := &readiness{}
	ready.set(phaseServing)
	hub := live.New(live.Options{MaxSubscribers: 1, Chain: true})
	line := []byte(`{"decision":"allow"}`)
	sum := sha256.Sum256(append(bytes.Clone(line), '\n'))
	hub.Tap(line, sum)
	srv := httptest.NewServer(adminHandler(prometheus.NewRegistry(), ready, hub))
	defer srv.Close()
	defer hub.Close() // ends the stream before srv.Close waits for it
	get := func(path string) (int, string) {
		path = strings.Replace(path, "SHA256", hex.EncodeToString(sum[:]), 1)
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.Header.Get("Content-Type") == "text/event-stream; charset=utf-8" {
			return resp.StatusCode, "(a stream)" // it never ends: its headers answer
		}
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, index := get("/")
	if code != 200 {
		t.Fatalf("GET /: %d %q, want 200", code, index)
	}
	for _, e := range adminEndpoints {
		if !strings.Contains(index, "\n  "+e.path+" ") {
			t.Errorf("GET / = %q: does not list %s", index, e.path)
		}
		if code, body := get(e.path); code != 200 {
			t.Errorf("GET %s (listed by /): %d %q, want 200", e.path, code, body)
		}
	}
	for _, want := range []string{"/healthz", "/readyz", "/metrics"} {
		if !strings.Contains(index, want) {
			t.Errorf("GET / = %q: want it to list %s", index, want)
		}
	}
	if code, _ := get("/nothing"); code != 404 {
		t.Errorf("GET /nothing: %d, want 404", code)
	}
}
