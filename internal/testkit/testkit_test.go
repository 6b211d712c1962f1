package testkit

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	c.Advance(90 * time.Second)
	if got := c.Now(); !got.Equal(start.Add(90 * time.Second)) {
		t.Errorf("Now after Advance(90s): got %v, want %v", got, start.Add(90*time.Second))
	}
}

func TestOriginCounts(t *testing.T) {
	o := NewOrigin(t, http.NotFoundHandler())
	for range 3 {
		resp, err := http.Get(o.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := o.Hits(); got != 3 {
		t.Errorf("Hits: got %d, want 3", got)
	}
}

func TestEcho(t *testing.T) {
	ln := Echo(t)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "ping\n")
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != "ping\n" {
		t.Errorf("echo: got %q, %v; want \"ping\\n\"", got, err)
	}
}

func TestAuditLines(t *testing.T) {
	var s AuditSink
	fmt.Fprint(&s, `{"decision":"allow"}`+"\n"+`{"decision":"deny"}`+"\n")
	if l := s.WaitLines(t, 2); len(l) != 2 || l[1]["decision"] != "deny" {
		t.Errorf("WaitLines: got %v", l)
	}
	p := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if l := ReadAuditLines(t, p); len(l) != 2 || l[0]["decision"] != "allow" {
		t.Errorf("ReadAuditLines: got %v", l)
	}
}
