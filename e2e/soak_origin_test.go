package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/robots"
)

// soakOrigin serves robots.txt files and pages for many authorities at
// once: one http.Server on one listener per authority, each bound to its
// own loopback address 127.10.X.Y (all of 127.0.0.0/8 is loopback on
// Linux), so the authorities are distinct without DNS and nothing listens
// beyond loopback.
type soakOrigin struct {
	srv   *http.Server
	hosts []string       // authority -> "127.10.X.Y:PORT"
	index map[string]int // hosts[i] -> i
	files []robotsFile   // authority i serves files[i%len(files)]

	robotsFetches []atomic.Int32 // authority -> GET /robots.txt by the proxy
	pageHits      atomic.Int64   // every other request
	open          atomic.Int64   // connections open now (the proxy's upstream ones)
	accepted      atomic.Int64   // connections accepted in all
}

// soakMaxAuthorities bounds the loopback addresses soakHost hands out.
const soakMaxAuthorities = 250 * 250

// soakHost is the loopback address of authority i < soakMaxAuthorities.
func soakHost(i int) string {
	return fmt.Sprintf("127.10.%d.%d", i/250, i%250+1)
}

// newSoakOrigin listens on n loopback authorities (ephemeral ports) and
// serves them until the test ends.
func newSoakOrigin(t *testing.T, files []robotsFile, n int) *soakOrigin {
	t.Helper()
	o := &soakOrigin{index: make(map[string]int, n), files: files, robotsFetches: make([]atomic.Int32, n)}
	o.srv = &http.Server{Handler: http.HandlerFunc(o.serve), ReadHeaderTimeout: time.Minute, ConnState: o.track}
	listeners := make([]net.Listener, 0, n)
	t.Cleanup(func() {
		o.srv.Close()
		for _, l := range listeners {
			l.Close()
		}
	})
	for i := range n {
		l, err := net.Listen("tcp", soakHost(i)+":0")
		if err != nil {
			t.Fatalf("origin for authority %d of %d: %v (each authority is a listening socket of this process: raise ulimit -n, or lower ROBOTSPROXY_SOAK_AUTHORITIES)", i, n, err)
		}
		listeners = append(listeners, l)
		o.hosts = append(o.hosts, l.Addr().String())
		o.index[l.Addr().String()] = i
	}
	for _, l := range listeners {
		go func() {
			if err := o.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("origin %s: %v", l.Addr(), err)
			}
		}()
	}
	return o
}

// file is the robots.txt file authority i serves.
func (o *soakOrigin) file(i int) int { return i % len(o.files) }

func (o *soakOrigin) serve(w http.ResponseWriter, r *http.Request) {
	i, ok := o.index[r.Host]
	if !ok {
		http.Error(w, "unknown authority "+r.Host, http.StatusMisdirectedRequest)
		return
	}
	if r.URL.Path == "/robots.txt" && strings.HasPrefix(r.UserAgent(), "robotsproxy/") {
		o.robotsFetches[i].Add(1)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(o.files[o.file(i)].body)
		return
	}
	o.pageHits.Add(1)
	_, _ = io.WriteString(w, "ok\n")
}

func (o *soakOrigin) track(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		o.open.Add(1)
		o.accepted.Add(1)
	case http.StateClosed, http.StateHijacked:
		o.open.Add(-1)
	}
}

// soakSynthetic is a small robots.txt with denials for every crawler, so
// that a share of the load is denied whatever the corpus files say.
var soakSynthetic = robotsFile{name: "synthetic", body: []byte(
	"User-agent: *\nDisallow: /private/\nAllow: /private/public\nDisallow: /*.pdf$\n\n" +
		"User-agent: GPTBot\nDisallow: /\n")}

// soakFiles returns soakSynthetic and about n corpus robots.txt files of
// at most maxBytes, spread evenly over the sorted names (all of them when
// there are at most n): small files, so that the figures measure the proxy
// and not one huge cache entry.
func soakFiles(t *testing.T, corpus string, n, maxBytes int) []robotsFile {
	t.Helper()
	dir := filepath.Join(corpus, "robots")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && strings.HasSuffix(e.Name(), ".txt") && info.Size() <= int64(maxBytes) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	step := max(1, len(names)/n)
	files := []robotsFile{soakSynthetic}
	for i := 0; i < len(names); i += step {
		body, err := os.ReadFile(filepath.Join(dir, names[i]))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, robotsFile{name: names[i], body: body})
	}
	return files
}

// soakCase is one request a worker may send to an authority serving a
// given file, and whether the proxy must allow it (RFC 9309, computed
// in-process with the robots package).
type soakCase struct {
	path, ua string
	allowed  bool
}

// soakCases lists, per file, its rule paths (rulePaths) crossed with the
// agents. It fails the test unless both allowed and denied cases exist.
func soakCases(t *testing.T, files []robotsFile, agents []string) [][]soakCase {
	t.Helper()
	ident := identity.NewIdentifier(identity.DefaultBrowserTokens(), nil)
	out := make([][]soakCase, len(files))
	allowed, denied := 0, 0
	for fi, f := range files {
		parsed := robots.Parse(f.body)
		paths := rulePaths(f.body, 3, 2)
		if f.name == soakSynthetic.name {
			paths = append(paths, "/private/x", "/private/public/y", "/a/b.pdf", "/a/b.pdf?x")
		}
		for _, ua := range agents {
			id := ident.Identify(ua)
			for _, p := range paths {
				c := soakCase{path: p, ua: ua, allowed: expect(parsed, id, p).allowed}
				out[fi] = append(out[fi], c)
				if c.allowed {
					allowed++
				} else {
					denied++
				}
			}
		}
	}
	if allowed == 0 || denied == 0 {
		t.Fatalf("soak cases: %d allowed, %d denied; want both", allowed, denied)
	}
	return out
}
