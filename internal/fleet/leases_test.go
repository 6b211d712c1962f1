package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/internal/politeness"
)

// TestLeasesRenewed: the renewer extends every lease a replica holds to a
// full leaseTTL, and stops with its release; a lease released before a
// renewal is not brought back.
func TestLeasesRenewed(t *testing.T) {
	rs := startRedis(t)
	r := newReplica(t, rs.URL(), nil)
	g := r.Gate(4, politeness.NewLocalGate(4))
	ctx := context.Background()
	const auth = "http://renew.example:80"
	key := r.gateKey(auth)
	held, err := g.Acquire(ctx, auth, false)
	if err != nil {
		t.Fatal(err)
	}
	released, err := g.Acquire(ctx, auth, false)
	if err != nil {
		t.Fatal(err)
	}
	// Both leases near their end, as after leaseTTL without renewal.
	soon := float64(time.Now().Add(time.Second).UnixMilli())
	ids := r.rdb.ZRange(ctx, key, 0, -1).Val()
	if len(ids) != 2 {
		t.Fatalf("leases: %v, want 2", ids)
	}
	for _, id := range ids {
		r.rdb.ZAdd(ctx, key, redis.Z{Score: soon, Member: id})
	}
	released()
	waitFlushed(t, r)
	r.leases.renew()
	left := r.rdb.ZRangeWithScores(ctx, key, 0, -1).Val()
	if len(left) != 1 {
		t.Fatalf("after one release and a renewal: %v, want one lease", left)
	}
	if until := time.UnixMilli(int64(left[0].Score)); time.Until(until) < leaseTTL-5*time.Second {
		t.Errorf("the held lease ends in %v after the renewal, want about %v", time.Until(until), leaseTTL)
	}
	held()
	waitFlushed(t, r)
	r.leases.renew()
	if n := r.rdb.ZCard(ctx, key).Val(); n != 0 {
		t.Errorf("after every release and a renewal: %d leases, want 0", n)
	}
	if len(r.leases.held) != 0 {
		t.Errorf("the renewer still holds %d leases, want 0", len(r.leases.held))
	}
}
