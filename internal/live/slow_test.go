package live

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/robotsproxy/robotsproxy/internal/audit"
)

// heapInUse is the heap in use after a collection, in octets.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestSubscriberThatNeverReads drives 10,000 decisions a second through
// the audit writer (chained, to a file, from 8 goroutines as concurrent
// requests write) for 5 s, while one subscriber opens the stream and
// never reads it. The subscriber is dropped and counted once its stream
// is stuck for the write timeout; every line is written meanwhile, many
// of them while the stream was stuck; and the heap does not grow with
// the octets that passed (the ring is fixed, the stream's backlog is the
// kernel's socket buffers, not ours).
func TestSubscriberThatNeverReads(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the audit writer for 5 s")
	}
	const (
		rate    = 10_000 // lines a second
		seconds = 5
		writers = 8
		timeout = 2 * time.Second
	)
	reg := prometheus.NewRegistry()
	h := New(Options{MaxSubscribers: 2, WriteTimeout: timeout, Chain: true, Registerer: reg})
	srv := serveHub(t, h)
	before := heapInUse()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096) // a small window: the server's writes block soon
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: admin\r\n\r\n", PathEvents); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the subscriber is counted", func() bool { return h.Subscribers() == 1 })

	f, err := os.Create(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(f, audit.Options{Chain: true, Tap: h.Tap})
	var dropAt atomic.Int64 // unix nanos when the drop was seen
	stop := make(chan struct{})
	go func() {
		for testutil.ToFloat64(h.m.dropped) == 0 {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		dropAt.Store(time.Now().UnixNano())
	}()
	defer close(stop)

	done := make([][]int64, writers) // when each writer's lines returned
	var wg sync.WaitGroup
	var failed atomic.Int64
	start := time.Now()
	for g := range writers {
		wg.Go(func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			per := rate / writers / 100 // lines per tick
			for i := 0; i < rate*seconds/writers; {
				<-tick.C
				for range per {
					line := fmt.Appendf(nil, `{"client":"10.0.%d.%d:%d","method":"GET","url":"https://www.example.com/catalogue/item/%d?ref=crawl","user_agent":"Mozilla/5.0 (compatible; ExampleBot/2.1; +https://example.com/bot)","decision":"allow","reason":"rule","enforced":true,"product_token":"ExampleBot","token_source":"user-agent","candidates":["ExampleBot"],"robots_url":"https://www.example.com/robots.txt","group":"examplebot","star_fallback":false,"rule":"Allow: /catalogue/","rule_line":12,"access_result":"successful","robots_status":200,"cache":"hit","robots_sha256":"b1000dd8b3ad0e41baba0e6638787999a0c27daad176000f8bab50061896882d","robots_fetched_at":"2026-11-28T13:12:29.126250544Z","status":200,"bytes":18342,"duration_ms":41.25,"time":"2026-11-28T13:12:34Z"}`+"\n", g, i%250, 1024+i, i)
					if _, err := w.Write(line); err != nil {
						failed.Add(1)
					}
					done[g] = append(done[g], time.Now().UnixNano())
					i++
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	waitFor(t, "the subscriber that never reads is dropped", func() bool { return dropAt.Load() != 0 })
	waitFor(t, "the dropped subscriber is no longer counted", func() bool { return h.Subscribers() == 0 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d lines failed", n)
	}
	if n := testutil.ToFloat64(h.m.dropped); n != 1 {
		t.Errorf("robotsproxy_live_subscribers_dropped_total = %v, want 1", n)
	}
	// The stream was stuck in one write for the timeout before the drop:
	// count the lines written in that window (less a margin each side).
	stuckFrom, stuckTo := dropAt.Load()-int64(timeout)+int64(200*time.Millisecond), dropAt.Load()-int64(200*time.Millisecond)
	during := 0
	for _, ts := range done {
		for _, at := range ts {
			if at >= stuckFrom && at <= stuckTo {
				during++
			}
		}
	}
	growth := int64(heapInUse()) - int64(before)
	t.Logf("%d lines in %v (%.0f a second); dropped %v after the start; %d lines written while the stream was stuck; heap grew %d KiB",
		rate*seconds, took.Round(time.Millisecond), float64(rate*seconds)/took.Seconds(), time.Duration(dropAt.Load()-start.UnixNano()).Round(time.Millisecond), during, growth>>10)
	if dropAt.Load() > start.Add(took).UnixNano() {
		t.Fatalf("the subscriber was dropped only after the lines were written: drive longer")
	}
	if during < rate/10 {
		t.Errorf("%d lines written while the stream was stuck, want the writer to go on (at least %d)", during, rate/10)
	}
	if growth > 16<<20 {
		t.Errorf("the heap grew by %d MiB while %d MiB of lines passed a subscriber that never read: want it bounded (16 MiB)", growth>>20, rate*seconds*830>>20)
	}
}
