package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/fleet/redisurl"
	"github.com/robotsproxy/robotsproxy/internal/keyfile"
	"github.com/robotsproxy/robotsproxy/internal/rules"
	"github.com/robotsproxy/robotsproxy/robots"
)

// FormatVersion is the version in every key: a replica never reads values
// of another format.
const FormatVersion = "v2"

// Defaults of Options (rules.DefaultStoreKeyPrefix and the others: the
// defaults of the shared.* keys).
const (
	DefaultKeyPrefix = rules.DefaultStoreKeyPrefix
	DefaultLockTTL   = rules.DefaultStoreLockTTL
	DefaultTimeout   = rules.DefaultStoreTimeout
	// DefaultPoolSize is the store's connection pool per replica (per
	// node of a cluster): rules.DefaultStorePoolSize.
	DefaultPoolSize = rules.DefaultStorePoolSize
)

// Options configure a Store. Zero values mean the defaults.
type Options struct {
	// URL is shared.redis_url (see redisurl.NewClient for the forms). Required.
	URL string
	// KeyPrefix starts every key. Default DefaultKeyPrefix.
	KeyPrefix string
	// LockTTL is how long a fetch lock is held at most: a replica that
	// dies while fetching blocks the others for no longer. It should
	// exceed WaitFor. Default 20s.
	LockTTL time.Duration
	// Timeout bounds each store operation; one that takes longer fails
	// into the local fallback. Default 500ms.
	Timeout time.Duration
	// PoolSize is the number of connections to the store (per node of a
	// cluster), unless URL gives pool_size. Default DefaultPoolSize.
	PoolSize int
	// WaitFor is how long a replica waits for another replica's fetch
	// (robots.timeout) before it fetches itself. Default 15s.
	WaitFor time.Duration
	// TTLRules are the cache rules (cache.*), the robots.txt cache's own:
	// a result is shared for as long as a single proxy's cache keeps it
	// (access.TTLRules.TTL).
	access.TTLRules
	// Parse is the parse limit (robots.max_bytes): shared bodies are
	// compiled with it, and a body longer than it plus one octet is
	// unreadable. Replicas with another limit do not use each other's
	// results.
	Parse robots.Options
	// RecordKey is the HMAC-SHA256 key of shared records
	// (shared.record_key_file, see ReadRecordKey): with one, every record
	// this replica writes carries a MAC over the record, its body and its
	// store key, and a record without a valid MAC is a miss. nil: records
	// are not authenticated (a record is still refused when it names
	// another robots.txt URL than its key's). Every replica of a fleet
	// needs the same key. Never logged.
	RecordKey []byte
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
	// Log receives the changes of state and refused operations.
	Log zerolog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.KeyPrefix == "" {
		o.KeyPrefix = DefaultKeyPrefix
	}
	if o.LockTTL <= 0 {
		o.LockTTL = DefaultLockTTL
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.PoolSize <= 0 {
		o.PoolSize = DefaultPoolSize
	}
	if o.WaitFor <= 0 {
		o.WaitFor = 15 * time.Second
	}
	o.TTLRules = o.TTLRules.WithDefaults()
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Store is a fleet's shared state in Redis or Valkey. A nil *Store shares
// nothing: Fetch calls the origin, Scheduler and Gate return the local
// ones. Safe for concurrent use.
type Store struct {
	o     Options
	rdb   redis.UniversalClient
	m     *metrics
	h     *health
	later *later // writes sent off the requests' path
	// leases renews the in-flight leases of this replica's requests.
	leases *leases
	// wakes delivers the notifications of shared records on channel
	// (PREFIX v2:robots-shared) to this replica's waiters; recheck is how
	// often a waiter looks again meanwhile (see Fetch).
	wakes   *wakes
	channel string
	recheck time.Duration
	// cluster is true for a Redis Cluster: a robots.txt body (in
	// another slot than its record) is read and written apart.
	cluster bool
	prefix  string // KeyPrefix + FormatVersion + ":"

	// refused counts refused records by reason (see refuse);
	// refusedLog is when one was last logged.
	refused    *prometheus.CounterVec
	refusedMu  sync.Mutex
	refusedLog time.Time

	// unreachableBefore is when this replica started or last forgot the
	// unreachable results (ForgetUnreachable), in Unix nanoseconds: a
	// shared unreachable record fetched before it is a miss.
	unreachableBefore atomic.Int64
}

// ForgetUnreachable makes the shared unreachable results fetched until now
// misses for this replica: it fetches robots.txt itself and shares the
// new result, which replaces the record for the whole fleet. New does it
// at start; a reload does it after the operator fixed what made an origin
// unreachable (see access.Cache.ForgetUnreachable). Nil-safe.
func (s *Store) ForgetUnreachable() {
	if s != nil {
		s.unreachableBefore.Store(s.o.Now().UnixNano())
	}
}

// New connects to the store of o.URL. An invalid URL is an error; a store
// that does not answer is not: the replica starts degraded (logged once)
// and shares once the store answers.
func New(o Options) (*Store, error) {
	o.setDefaults()
	rdb, err := redisurl.NewClient(o.URL, o.PoolSize)
	if err != nil {
		return nil, fmt.Errorf("shared.redis_url: %w", err)
	}
	s := &Store{o: o, rdb: rdb, m: newMetrics(o.Registerer), prefix: o.KeyPrefix + FormatVersion + ":",
		refused: newRefusedMetric(o.Registerer)}
	s.unreachableBefore.Store(o.Now().UnixNano()) // a restart forgets them too
	s.later = startLater(s)
	_, s.cluster = rdb.(*redis.ClusterClient)
	s.channel, s.recheck = s.prefix+"robots-shared", recheck
	s.wakes = startWakes(rdb, s.channel)
	if ps, ok := rdb.(poolStater); ok && o.Registerer != nil {
		o.Registerer.MustRegister(poolCollector{ps})
	}
	s.h = &health{log: o.Log, now: o.Now, m: s.m, target: redisurl.Redact(o.URL), timeout: o.Timeout,
		ping: func(ctx context.Context) error { return rdb.Ping(ctx).Err() }, up: true, since: o.Now()}
	s.h.upNow.Store(true)
	s.leases = startLeases(s) // after s.h, which its ticker reads
	s.m.up.Set(1)
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		s.h.failed(opPing, err)
	} else {
		o.Log.Info().Str("redis_url", s.h.target).Str("key_prefix", o.KeyPrefix).
			Bool("records_authenticated", len(o.RecordKey) > 0).
			Msg("shared store reachable: robots.txt results and politeness state are shared by the fleet")
	}
	return s, nil
}

// Close sends the writes queued off the requests' path (releases of
// in-flight slots), then closes the connections to the store.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	s.leases.stop()
	s.later.stop()
	s.wakes.close()
	if err := s.rdb.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
		return fmt.Errorf("shared store: close: %w", err)
	}
	return nil
}

// Ready is the store's readiness check for /readyz: always ready (the
// replica works without the store), with a reason ("degraded") while the
// store is unreachable. It pings the store at most once a second.
func (s *Store) Ready() (ready bool, reason string) {
	if s == nil {
		return true, ""
	}
	return s.h.check()
}

// Up reports whether the store answered the last operation.
func (s *Store) Up() bool { return s != nil && s.h.isUp() }

// ctx returns a context bounded by the operation timeout.
func (s *Store) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, s.o.Timeout)
}

// gateKey is the store key of an authority's in-flight leases. Its hash
// tag is the one of the authority's politeness keys (see paceKey): one
// script uses both, so in a Redis Cluster they are in one slot.
func (s *Store) gateKey(authority string) string {
	return s.key("gate", "{"+authority+"}")
}

// recordKey is the store key of the robots.txt record of id
// (scheme://authority); lockKey the key of its fetch lock. They share a
// hash tag: claimScript and shareScript use both, so in a Redis Cluster
// they are in one slot.
func (s *Store) recordKey(id string) string { return s.key("robots", "{"+id+"}") }

// lockKey: see recordKey.
func (s *Store) lockKey(id string) string { return s.key("lock", "{"+id+"}") }

// key returns PREFIX v2:KIND:ID.
func (s *Store) key(kind, id string) string {
	var b strings.Builder
	b.Grow(len(s.prefix) + len(kind) + 1 + len(id))
	b.WriteString(s.prefix)
	b.WriteString(kind)
	b.WriteByte(':')
	b.WriteString(id)
	return b.String()
}

// MinRecordKeyBytes is the shortest record key ReadRecordKey accepts.
const MinRecordKeyBytes = 16

// ReadRecordKey reads the record key of Options.RecordKey from the file
// at path (shared.record_key_file): its octets less surrounding white
// space, at least MinRecordKeyBytes of them and at most keyfile.MaxBytes.
// Errors name the file, never the key.
func ReadRecordKey(path string) ([]byte, error) {
	key, err := keyfile.Read(path, MinRecordKeyBytes)
	if err != nil {
		return nil, fmt.Errorf("record key: %w", err)
	}
	return key, nil
}
