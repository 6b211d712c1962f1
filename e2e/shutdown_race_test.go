package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestShutdownAuditsOnlyAnswers: SIGTERM under many keep-alive connections
// that send request after request. A request the proxy read is either
// answered and audited as answered, or audited with cut_off "shutdown";
// no line claims an answer (status 403, its bytes) that its client never
// got. The default is a short run for CI; ROBOTSPROXY_SHUTDOWN_CYCLES=N
// (and ROBOTSPROXY_SHUTDOWN_CONNS) makes it a stress run.
func TestShutdownAuditsOnlyAnswers(t *testing.T) {
	cycles, conns := envInt("ROBOTSPROXY_SHUTDOWN_CYCLES", 5), envInt("ROBOTSPROXY_SHUTDOWN_CONNS", 96)
	origin := scriptedOrigin(t, func(w http.ResponseWriter) { fmt.Fprint(w, "User-agent: *\nDisallow: /\n") })
	target := strings.TrimPrefix(origin.URL, "http://")
	bad, answered, lines := 0, 0, 0
	for cycle := range cycles {
		p := startProxy(t, "shutdown_timeout: 2s\n")
		var mu sync.Mutex
		got := map[string]int{} // path -> status the client read whole
		var wg sync.WaitGroup
		for g := range conns {
			wg.Go(func() {
				c, err := net.Dial("tcp", p.proxyAddr)
				if err != nil {
					return
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(20 * time.Second))
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					path := fmt.Sprintf("/c%d/g%d/r%d", cycle, g, i)
					if _, err := fmt.Fprintf(c, "GET http://%s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ExampleBot/1.0\r\n\r\n", target, path, target); err != nil {
						return
					}
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						return
					}
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil {
						return
					}
					mu.Lock()
					got[path] = resp.StatusCode
					mu.Unlock()
				}
			})
		}
		time.Sleep(300 * time.Millisecond)
		p.signal(t, syscall.SIGTERM)
		wg.Wait()
		p.wait(t, "SIGTERM")
		for _, raw := range p.stdout.lines() {
			var l struct {
				URL    string `json:"url"`
				Status int    `json:"status"`
				CutOff string `json:"cut_off"`
			}
			if json.Unmarshal([]byte(raw), &l) != nil || !strings.Contains(l.URL, "/c") {
				continue
			}
			lines++
			path := l.URL[strings.Index(l.URL, target)+len(target):]
			if l.CutOff != "" || l.Status == 0 {
				continue
			}
			if s, ok := got[path]; !ok || s != l.Status {
				if bad++; bad <= 5 {
					t.Errorf("cycle %d: audit line says %d for %s, the client read %v (got it: %v)", cycle, l.Status, path, s, ok)
				}
			}
		}
		answered += len(got)
	}
	t.Logf("%d cycles, %d connections: %d answers read, %d audit lines, %d claiming an answer the client did not get",
		cycles, conns, answered, lines, bad)
	if answered == 0 {
		t.Fatal("no request was answered: the test measured nothing")
	}
}

// envInt reads a positive integer from the environment, def when unset.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
