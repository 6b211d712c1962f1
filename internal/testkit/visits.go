package testkit

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Visit is one request a site answered other than /robots.txt: its path
// and when it arrived.
type Visit struct {
	Path string
	At   time.Time
}

// Visits counts what a robots.txt-serving test origin is asked: the
// /robots.txt fetches, and every other request's path, in order of
// arrival, with its time. The zero value is ready to use; it is safe for
// concurrent use.
type Visits struct {
	robots atomic.Int64
	mu     sync.Mutex
	list   []Visit
}

// Handler answers /robots.txt with robots and every other path with page,
// counting each request before it is answered.
func (v *Visits) Handler(robots, page http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			v.robots.Add(1)
			robots.ServeHTTP(w, r)
			return
		}
		v.mu.Lock()
		v.list = append(v.list, Visit{r.URL.Path, time.Now()})
		v.mu.Unlock()
		page.ServeHTTP(w, r)
	})
}

// RobotsHits returns how many times /robots.txt was fetched.
func (v *Visits) RobotsHits() int64 { return v.robots.Load() }

// Count returns how many requests for path (other than /robots.txt) there
// were.
func (v *Visits) Count(path string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, x := range v.list {
		if x.Path == path {
			n++
		}
	}
	return n
}

// List returns the requests other than /robots.txt, in order of arrival.
func (v *Visits) List() []Visit {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Visit(nil), v.list...)
}

// Paths returns the paths of List.
func (v *Visits) Paths() []string {
	var out []string
	for _, x := range v.List() {
		out = append(out, x.Path)
	}
	return out
}

// Pages returns how many requests other than /robots.txt there were.
func (v *Visits) Pages() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return int64(len(v.list))
}

// Site is an HTTP origin on 127.0.0.1 that counts what it is asked
// (Visits). It stops when the test ends.
type Site struct {
	*httptest.Server
	Visits
}

// NewSite starts a Site answering /robots.txt with robots and every other
// path with page.
func NewSite(t testing.TB, robots, page http.Handler) *Site {
	t.Helper()
	s := &Site{}
	s.Server = httptest.NewServer(s.Visits.Handler(robots, page))
	t.Cleanup(s.Close)
	return s
}
