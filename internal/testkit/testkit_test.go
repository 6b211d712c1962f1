package testkit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

func TestSiteCounts(t *testing.T) {
	s := NewSite(t, http.NotFoundHandler(), http.NotFoundHandler())
	for _, p := range []string{"/robots.txt", "/a", "/b", "/a"} {
		resp, err := http.Get(s.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if s.RobotsHits() != 1 || s.Pages() != 3 || s.Count("/a") != 2 || strings.Join(s.Paths(), ",") != "/a,/b,/a" {
		t.Errorf("robots %d, pages %d, /a %d, paths %v; want 1, 3, 2, /a,/b,/a", s.RobotsHits(), s.Pages(), s.Count("/a"), s.Paths())
	}
}

func TestFullDisk(t *testing.T) {
	d := NewFullDisk(5)
	if n, err := d.Write([]byte("abcdefg")); n != 5 || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Write past the room: %d, %v; want 5, ENOSPC", n, err)
	}
	if err := d.Unwrite(2); err != nil || string(d.Bytes()) != "abc" {
		t.Errorf("Unwrite(2): %v, %q; want nil, abc", err, d.Bytes())
	}
	d.NoUnwrite(true)
	if err := d.Unwrite(1); err == nil {
		t.Error("Unwrite with NoUnwrite: no error")
	}
	d.SetRoom(10)
	if n, err := d.Write([]byte("de")); n != 2 || err != nil || d.Len() != 5 {
		t.Errorf("Write after SetRoom: %d, %v, len %d; want 2, nil, 5", n, err, d.Len())
	}
}

func TestBasicAuth(t *testing.T) {
	if got := BasicAuth("Aladdin", "open sesame"); got != "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==" { // RFC 7617 2
		t.Errorf("BasicAuth: %q", got)
	}
	if !bytes.Equal(BcryptHash(t, "pw"), BcryptHash(t, "pw")) {
		t.Error("BcryptHash: not memoised")
	}
}
