package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/internal/redistest"
)

// TestClusterSharesPolitenessAndRobots runs the politeness scripts on a real three-node
// Redis Cluster (redis+cluster://): an authority's politeness and
// in-flight keys share a hash tag, so the one script of a turn finds both
// on one node (no CROSSSLOT), for authorities spread over every node; two
// replicas share the spacing and the cap as on one server, and one
// robots.txt fetch.
func TestClusterSharesPolitenessAndRobots(t *testing.T) {
	_, url := redistest.StartCluster(t, 3)
	ra, rb := newReplica(t, url, nil), newReplica(t, url, nil)
	local := func() politeness.Scheduler { return politeness.NewLocalScheduler(politeness.LocalOptions{}) }
	a, b := ra.Scheduler(local(), SchedulerOptions{}).(*Scheduler), rb.Scheduler(local(), SchedulerOptions{}).(*Scheduler)
	ga, gb := ra.Gate(1, politeness.NewLocalGate(1)), rb.Gate(1, politeness.NewLocalGate(1))
	ctx := context.Background()
	for i := range 30 { // 30 authorities: every node holds some
		auth := fmt.Sprintf("https://site%d.example:443", i)
		key := politeness.Key{Token: "bot", Authority: auth}
		before := time.Now()
		ta, err := a.Turn(ctx, key, time.Second, time.Minute, 0, ga)
		if err != nil || !ta.Started || ta.Release == nil {
			t.Fatalf("%s: turn on a: got %+v, %v; want started with a slot", auth, ta, err)
		}
		tb, err := b.Turn(ctx, key, time.Second, time.Minute, 0, gb)
		if err != nil || !tb.Granted || !within(tb.Wait, time.Second, time.Since(before)) || tb.Started || tb.Release != nil {
			t.Errorf("%s: turn on b: got %+v, %v; want granted after about 1s, no slot", auth, tb, err)
		}
		if _, err := gb.Acquire(ctx, auth, false); err != politeness.ErrBusy {
			t.Errorf("%s: second slot of 1 on b: got %v, want ErrBusy", auth, err)
		}
		ta.Release()
	}
	// robots.txt results: one origin fetch for both replicas.
	o := newRobotsOrigin(t, "User-agent: *\nDisallow: /private\n")
	first := ra.Fetch(ctx, "http", o.authority(), fetcher())
	second := rb.Fetch(ctx, "http", o.authority(), fetcher())
	if n := o.fetches.Load(); n != 1 || second.SHA256 != first.SHA256 || allowed(second, "Bot", "/private") {
		t.Errorf("robots.txt on the cluster: %d origin fetches, shared copy %x (fetched %x); want 1 fetch, the same copy", n, second.SHA256, first.SHA256)
	}
	for _, r := range []*replica{ra, rb} {
		if n := r.counter("errors/read") + r.counter("errors/write") + r.counter("errors/lock"); n != 0 {
			t.Errorf("robots.txt operations that failed: %v, want 0", n)
		}
		if n := r.counter("fallbacks/politeness"); n != 0 {
			t.Errorf("fallbacks to local state: %v, want 0 (an error such as CROSSSLOT falls back)", n)
		}
	}
	waitFlushed(t, ra)
	for i := range 30 {
		if n := ra.rdb.ZCard(ctx, ra.gateKey(fmt.Sprintf("https://site%d.example:443", i))).Val(); n != 0 {
			t.Errorf("site%d: %d leases after the releases, want 0", i, n)
		}
	}
}
