package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/access"
)

// Polling for another replica's fetch: the first poll after pollMin,
// doubling up to pollMax.
const (
	pollMin = 5 * time.Millisecond
	pollMax = 100 * time.Millisecond
	// bodyGrace keeps a body a little longer than the record that names
	// it, so that a reader who got the record finds the body.
	bodyGrace = time.Minute
)

// putBody stores a body once per hash: SET when absent, else lengthen its
// TTL to ARGV[2] ms when that is longer (PEXPIRE GT needs Redis 7).
var putBody = redis.NewScript(`
local ttl = tonumber(ARGV[2])
local cur = redis.call('PTTL', KEYS[1])
if cur == -2 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
  return 1
end
if cur >= 0 and cur < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 0`)

// unlock deletes a lock only when it still holds our token.
var unlock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// Fetch returns the robots.txt result of scheme://authority for a local
// cache miss: the fleet's shared result when there is a usable one, else
// origin's, fetched by this replica while it holds the authority's lock
// (or after waiting WaitFor for the replica holding it) and then shared.
// When the store is unreachable it calls origin. A nil Store calls origin.
// origin's result is returned as it came, Raw included.
func (s *Store) Fetch(ctx context.Context, scheme, authority string, origin access.FetchFunc) access.Access {
	if s == nil {
		return origin(ctx, scheme, authority)
	}
	if !s.h.usable() {
		return s.local(ctx, scheme, authority, origin)
	}
	id := scheme + "://" + authority
	recKey, lockKey := s.key("robots", id), s.key("lock", id)
	url := access.RobotsURL(scheme, authority)
	token := newToken()
	deadline := s.o.Now().Add(s.o.WaitFor)
	waited := false
	for poll := pollMin; ; poll = min(2*poll, pollMax) {
		a, ok, err := s.lookup(ctx, recKey, url)
		if err != nil {
			return s.local(ctx, scheme, authority, origin)
		}
		if ok {
			s.m.hits.Inc()
			return a
		}
		won, err := s.tryLock(ctx, lockKey, token)
		if err != nil {
			s.h.failed(opLock, err)
			return s.local(ctx, scheme, authority, origin)
		}
		if won {
			s.m.misses.Inc()
			a := origin(ctx, scheme, authority)
			s.share(ctx, recKey, url, a)
			if s.h.isUp() { // else the lock expires after LockTTL
				s.release(ctx, lockKey, token)
			}
			return a
		}
		if !waited {
			waited = true
			s.m.lockWaits.Inc()
		}
		if !s.o.Now().Add(poll).Before(deadline) {
			s.m.misses.Inc()
			return origin(ctx, scheme, authority) // the holder is slow or gone
		}
		if err := sleep(ctx, poll); err != nil {
			return origin(ctx, scheme, authority)
		}
	}
}

// local fetches from the origin while the store is unreachable.
func (s *Store) local(ctx context.Context, scheme, authority string, origin access.FetchFunc) access.Access {
	s.m.fallbacks.WithLabelValues(fallbackRobots).Inc()
	return origin(ctx, scheme, authority)
}

// lookup reads the shared result at key, the key of the robots.txt URL
// url. ok is false for a miss: for a value that cannot be read or
// checked (counted as a read error), for a record that names another URL
// than url, has no valid MAC under the record key, or outlives its TTL
// (refused: counted and logged, see refuse), and for one that would be
// used past MaxTTL in total; err is set when the store failed (it is
// then marked down). Values are read up to one octet past their bound
// (GETRANGE), so that an oversize one is unreadable without being read
// whole.
func (s *Store) lookup(ctx context.Context, key, url string) (a access.Access, ok bool, err error) {
	cctx, cancel := s.ctx(ctx)
	defer cancel()
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	_, err = s.rdb.Pipelined(cctx, func(p redis.Pipeliner) error {
		get, pttl = p.GetRange(cctx, key, 0, maxRecordBytes), p.PTTL(cctx, key)
		return nil
	})
	if err != nil {
		s.h.failed(opRead, err)
		return a, false, err
	}
	s.h.ok()
	raw, remaining := []byte(get.Val()), pttl.Val()
	if len(raw) == 0 && remaining == -2 {
		return a, false, nil // no such key (GETRANGE answers "")
	}
	r, err := decodeRecord(raw, s.o.Parse.Limit())
	if err != nil {
		s.unreadable(key, err)
		return a, false, nil
	}
	if r.URL != url {
		s.refuse(key, refusedURL, fmt.Errorf("record of robots.txt URL %.200q, want %q", r.URL, url))
		return a, false, nil
	}
	if remaining <= 0 || !s.fresh(r, remaining) {
		return a, false, nil
	}
	body, found, err := s.body(cctx, r)
	if err != nil || !found {
		return a, false, err // err: the store failed; !found: evicted, fetch again
	}
	if err := verify(s.o.RecordKey, key, raw, body); err != nil {
		s.refuse(key, refusedMAC, err)
		return a, false, nil
	}
	if err := s.current(r, remaining); err != nil {
		s.refuse(key, refusedAge, err)
		return a, false, nil
	}
	if a, err = r.access(body, remaining, s.o.Parse); err != nil {
		s.unreadable(key, err)
		return access.Access{}, false, nil
	}
	return a, true, nil
}

// body reads the body r names, up to one octet past r.Size (at most the
// parse limit plus one, checked by decodeRecord): a longer body comes
// back longer than r.Size and does not match its record. found is false
// when the body is missing (evicted); a record without a body has a nil
// one.
func (s *Store) body(ctx context.Context, r record) (body []byte, found bool, err error) {
	if r.SHA256 == "" {
		return nil, true, nil
	}
	key := s.key("body", r.SHA256)
	var get *redis.StringCmd
	var exists *redis.IntCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get, exists = p.GetRange(ctx, key, 0, int64(r.Size)), p.Exists(ctx, key)
		return nil
	})
	if err != nil {
		s.h.failed(opRead, err)
		return nil, false, err
	}
	if exists.Val() == 0 {
		return nil, false, nil
	}
	return []byte(get.Val()), true, nil
}

// fresh reports whether a result with remaining lifetime left may be
// used: the local cache keeps it for max(remaining, MinTTL), and its age
// plus that must not exceed MaxTTL (RFC 9309 2.4); otherwise it is
// fetched again (the new result replaces it for the whole fleet).
func (s *Store) fresh(r record, remaining time.Duration) bool {
	age := time.Duration(r.TTLMS)*time.Millisecond - remaining
	return age+max(remaining, s.o.MinTTL) <= s.o.MaxTTL
}

// maxClockSkew is how far the clocks of a fleet's replicas may differ
// before current refuses records that are still current.
const maxClockSkew = 5 * time.Minute

// current returns an error when r, with remaining lifetime left in the
// store, outlives the TTL it was shared for: a store lifetime longer
// than that TTL, or a fetch longer ago than the TTL plus the fetch's
// duration and maxClockSkew. A replica never stores such a record; it is
// an older record written again (with a record key, a genuine one
// replayed), and refused so that no record lives past its TTL.
func (s *Store) current(r record, remaining time.Duration) error {
	ttl := time.Duration(r.TTLMS) * time.Millisecond
	if remaining > ttl {
		return fmt.Errorf("%v left in the store, over the TTL of %v it was shared for", remaining, ttl)
	}
	age := s.o.Now().Sub(r.FetchedAt)
	if limit := ttl + time.Duration(r.DurationMS*float64(time.Millisecond)) + maxClockSkew; age > limit {
		return fmt.Errorf("fetched at %s, %v ago: over its TTL of %v (clocks may differ by %v)",
			r.FetchedAt.Format(time.RFC3339), age.Round(time.Second), ttl, maxClockSkew)
	}
	return nil
}

// unreadable counts and logs a shared value that is not used.
func (s *Store) unreadable(key string, err error) {
	s.m.errors.WithLabelValues(opRead).Inc()
	s.o.Log.Warn().Err(err).Str("key", key).Msg("shared robots.txt result unreadable: fetched again")
}

// refuse counts a record refused for reason (refusedURL, refusedMAC,
// refusedAge) and logs it as a warning, at most once per
// refusedLogEvery: such a record was written by something else than a
// replica of this fleet (or by one with another record key, or a clock
// more than maxClockSkew off).
func (s *Store) refuse(key, reason string, err error) {
	s.refused.WithLabelValues(reason).Inc()
	now := s.o.Now()
	s.refusedMu.Lock()
	if now.Sub(s.refusedLog) < refusedLogEvery {
		s.refusedMu.Unlock()
		return
	}
	s.refusedLog = now
	s.refusedMu.Unlock()
	s.o.Log.Warn().Err(err).Str("key", key).Str("reason", reason).
		Msg("shared robots.txt record refused: fetched again (logged at most once a minute; see robotsproxy_shared_records_refused_total)")
}

// ttl is how long a result is shared: as long as a single proxy's cache
// keeps it (access.TTLRules, RFC 9309 2.4).
func (s *Store) ttl(a access.Access) time.Duration { return s.o.TTL(a) }

// share stores a's result at key, the key of the robots.txt URL url (its
// body first, so that a record never names a missing body). The record
// names url (a result of another URL is not shared) and, with a record
// key, carries its MAC. Failures are logged and counted; a stays this
// replica's result.
func (s *Store) share(ctx context.Context, key, url string, a access.Access) {
	ttl := s.ttl(a)
	if ttl < time.Millisecond {
		return // max-age=0 with no minimum: nothing to share
	}
	r := newRecord(a, s.o.Parse.Limit(), ttl)
	if r.URL == "" {
		r.URL = url
	}
	if r.URL != url {
		s.o.Log.Warn().Str("key", key).Str("url", r.URL).Str("want_url", url).
			Msg("robots.txt result of another URL than its key's: kept by this replica only")
		return
	}
	raw, err := s.encode(r, key, a.Raw)
	if err != nil || len(raw) > maxRecordBytes || len(a.Raw) > s.o.Parse.Limit()+1 {
		s.o.Log.Warn().Err(err).Str("key", key).Int("record_bytes", len(raw)).
			Msg("robots.txt result too large to share: kept by this replica only")
		return
	}
	cctx, cancel := s.ctx(ctx)
	defer cancel()
	if r.SHA256 != "" {
		err = putBody.Run(cctx, s.rdb, []string{s.key("body", r.SHA256)}, a.Raw, (ttl + bodyGrace).Milliseconds()).Err()
	}
	if err == nil || errors.Is(err, redis.Nil) {
		err = s.rdb.Set(cctx, key, raw, ttl).Err()
	}
	if err != nil {
		s.h.failed(opWrite, err)
		return
	}
	s.h.ok()
}

// encode returns the stored form of r, the record at key with body: its
// JSON, ending with its MAC when the replica has a record key.
func (s *Store) encode(r record, key string, body []byte) ([]byte, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode record: %w", err)
	}
	return seal(s.o.RecordKey, key, raw, body), nil
}

// tryLock takes the lock at key with token for LockTTL.
func (s *Store) tryLock(ctx context.Context, key, token string) (bool, error) {
	cctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.rdb.SetNX(cctx, key, token, s.o.LockTTL).Result()
}

// release deletes the lock at key if it still holds token.
func (s *Store) release(ctx context.Context, key, token string) {
	cctx, cancel := s.ctx(ctx)
	defer cancel()
	if err := unlock.Run(cctx, s.rdb, []string{key}, token).Err(); err != nil && !errors.Is(err, redis.Nil) {
		s.h.failed(opLock, err)
	}
}

// newToken returns a random lock token.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait for the shared result: %w", context.Cause(ctx))
	case <-t.C:
		return nil
	}
}
