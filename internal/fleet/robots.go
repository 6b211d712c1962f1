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

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Waiting for another replica's fetch: without notifications (the
// subscription is not up), the first poll after pollMin, doubling up to
// pollMax; with them, a re-check every recheck in case a message was
// lost (pub/sub delivers at most once).
const (
	pollMin = 5 * time.Millisecond
	pollMax = 100 * time.Millisecond
	recheck = 250 * time.Millisecond
	// bodyGrace keeps a body a little longer than the record that names
	// it, so that a reader who got the record finds the body.
	bodyGrace = time.Minute
)

// claimScript reads an authority's record or, when there is none, takes
// its fetch lock: a cold authority's one round trip before the fetch.
// KEYS: the record key, the lock key (one hash tag, one cluster slot).
// ARGV: the record's bound in octets (GETRANGE to it: one past
// maxRecordBytes), the lock token, the lock's TTL in ms, the body key
// prefix ("" reads no body: a Redis Cluster, where the body is in
// another slot), the body's bound (the parse limit plus one).
// Returns {found (0/1), record, PTTL, lock taken (0/1), body SHA-256,
// body size, body, body exists (0/1)}. The body read is the one the
// record names: its "sha256" and "size" members found with string.match
// (a SHA-256 in hex only, so no other key is read; the reader checks
// that its decoded record names the same). The body key is not in KEYS:
// it is shared by every authority whose robots.txt has that hash, which
// one server allows and a cluster does not.
var claimScript = redis.NewScript(`
local raw = redis.call('GETRANGE', KEYS[1], 0, tonumber(ARGV[1]))
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 then
  local won = redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', tonumber(ARGV[3]))
  if won then return {0, '', pttl, 1, '', -1, '', 0} end
  return {0, '', pttl, 0, '', -1, '', 0}
end
if ARGV[4] == '' then return {1, raw, pttl, 0, '', -1, '', 0} end
local sha = string.match(raw, '"sha256":"(%x+)"')
local size = tonumber(string.match(raw, '"size":(%d+)') or '')
if not sha or #sha ~= 64 or not size then return {1, raw, pttl, 0, '', -1, '', 0} end
size = math.min(size, tonumber(ARGV[5]))
local key = ARGV[4] .. sha
return {1, raw, pttl, 0, sha, size, redis.call('GETRANGE', key, 0, size), redis.call('EXISTS', key)}`)

// shareScript is a cold authority's one round trip after the fetch:
// it stores the body (when KEYS has a third key: SET when absent, else
// lengthens its TTL to ARGV[6] ms when that is longer), then the record
// ARGV[1] for ARGV[2] ms (none when ARGV[1] is ""), deletes the lock
// when it still holds the token ARGV[3], and publishes the record key on
// the channel ARGV[4] to wake the waiters of every replica. KEYS: the
// record key, the lock key[, the body key]; ARGV[5] is the body. The
// body goes first: a record never names a missing body.
var shareScript = redis.NewScript(`
if #KEYS == 3 then
  local ttl = tonumber(ARGV[6])
  local cur = redis.call('PTTL', KEYS[3])
  if cur == -2 then
    redis.call('SET', KEYS[3], ARGV[5], 'PX', ttl)
  elseif cur >= 0 and cur < ttl then
    redis.call('PEXPIRE', KEYS[3], ttl)
  end
end
if ARGV[1] ~= '' then redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2])) end
if ARGV[3] ~= '' and redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
redis.call('PUBLISH', ARGV[4], KEYS[1])
return 1`)

// putBody stores a body once per hash: SET when absent, else lengthen its
// TTL to ARGV[2] ms when that is longer (PEXPIRE GT needs Redis 7). In a
// Redis Cluster it goes before shareScript (the body is in another slot).
var putBody = redis.NewScript(`
local ttl = tonumber(ARGV[2])
local cur = redis.call('PTTL', KEYS[1])
if cur == -2 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
  return 1
end
if cur >= 0 and cur < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 0`)

// lock is a fetch lock held by this replica: its key and token.
type lock struct{ key, token string }

// Fetch returns the robots.txt result of scheme://authority for a local
// cache miss: the fleet's shared result when there is a usable one, else
// origin's, fetched by this replica while it holds the authority's lock
// (or after waiting WaitFor for the replica holding it) and then shared.
// A cold authority costs one round trip before the fetch (claimScript:
// the record, or the lock) and one after it (shareScript: body, record,
// unlock and a notification); a replica waiting for another's fetch is
// woken by that notification (see wakes). When the store is unreachable
// it calls origin. A nil Store calls origin. origin's result is
// returned as it came, Raw included.
func (s *Store) Fetch(ctx context.Context, scheme, authority string, origin access.FetchFunc) policy.Access {
	if s == nil {
		return origin(ctx, scheme, authority)
	}
	if !s.h.usable() {
		return s.local(ctx, scheme, authority, origin)
	}
	id := scheme + "://" + authority
	recKey, lockKey := s.recordKey(id), s.lockKey(id)
	url := policy.RobotsURL(scheme, authority)
	token := newToken()
	deadline := s.o.Now().Add(s.o.WaitFor)
	// Watched before the first claim: a notification sent after a claim
	// that found the lock taken is not missed.
	woken, stop := s.wakes.watch(recKey)
	defer stop()
	waited := false
	for poll := pollMin; ; poll = min(2*poll, pollMax) {
		a, ok, won, err := s.claim(ctx, recKey, lockKey, url, token)
		if err != nil && callerGone(ctx) != nil {
			return origin(ctx, scheme, authority) // not the store's failure: no fallback
		}
		if err != nil {
			return s.local(ctx, scheme, authority, origin)
		}
		if ok {
			s.m.hits.Inc()
			return a
		}
		if won {
			s.m.misses.Inc()
			a := origin(ctx, scheme, authority)
			s.share(ctx, recKey, url, a, lock{lockKey, token})
			return a
		}
		if !waited {
			waited = true
			s.m.lockWaits.Inc()
		}
		wait := poll
		if s.wakes.subscribed.Load() {
			wait = s.recheck
		}
		left := deadline.Sub(s.o.Now())
		if left <= 0 {
			s.m.misses.Inc()
			return origin(ctx, scheme, authority) // the holder is slow or gone
		}
		if err := s.await(ctx, woken, min(wait, left)); err != nil {
			return origin(ctx, scheme, authority)
		}
	}
}

// await waits for a notification on woken, for d, or until ctx ends.
func (s *Store) await(ctx context.Context, woken <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("wait for the shared result: %w", context.Cause(ctx))
	case <-woken:
		return nil
	case <-t.C:
		return nil
	}
}

// local fetches from the origin while the store is unreachable.
func (s *Store) local(ctx context.Context, scheme, authority string, origin access.FetchFunc) policy.Access {
	s.m.fallbacks.WithLabelValues(fallbackRobots).Inc()
	return origin(ctx, scheme, authority)
}

// claim reads the shared result at key, the key of the robots.txt URL
// url, or takes the fetch lock at lockKey with token when there is
// none, in one round trip (claimScript; a second one to read the body
// in a Redis Cluster). ok is true for a usable result (see usable); won
// when this replica took the lock and fetches. A record that is not
// usable is a miss: the lock is then tried in another round trip. err is
// set when the store failed (it is then marked down).
func (s *Store) claim(ctx context.Context, key, lockKey, url, token string) (a policy.Access, ok, won bool, err error) {
	cctx, cancel := s.ctx(ctx)
	defer cancel()
	bodyPrefix := s.key("body", "")
	if s.cluster {
		bodyPrefix = "" // another slot: read in a second round trip
	}
	v, err := claimScript.Run(cctx, s.rdb, []string{key, lockKey},
		maxRecordBytes, token, s.o.LockTTL.Milliseconds(), bodyPrefix, s.o.Parse.Limit()+1).Slice()
	if err != nil {
		s.failed(ctx, opLock, err) // the script takes the lock: a store refusing writes fails it
		return a, false, false, err
	}
	s.h.ok()
	if len(v) != 8 {
		err = fmt.Errorf("robots.txt claim script: %d values in the reply, want 8", len(v))
		s.h.failed(opRead, err)
		return a, false, false, err
	}
	found, _ := v[0].(int64)
	if found == 0 {
		taken, _ := v[3].(int64)
		return a, false, taken == 1, nil
	}
	raw, _ := v[1].(string)
	remaining, _ := v[2].(int64)
	var sb *scriptBody
	if sha, _ := v[4].(string); sha != "" {
		size, _ := v[5].(int64)
		body, _ := v[6].(string)
		exists, _ := v[7].(int64)
		sb = &scriptBody{sha: sha, size: int(size), body: []byte(body), found: exists == 1}
	}
	if a, ok, err = s.usable(cctx, key, url, []byte(raw), time.Duration(remaining)*time.Millisecond, sb); ok || err != nil {
		return a, ok, false, err
	}
	won, err = s.tryLock(cctx, lockKey, token)
	if err != nil {
		s.failed(ctx, opLock, err)
	}
	return a, false, won, err
}

// scriptBody is the body claimScript read: the one of SHA-256 sha, read
// up to one octet past size (when it is a record's size, up to the
// bound body reads to); found is false when it was missing.
type scriptBody struct {
	sha   string
	size  int
	body  []byte
	found bool
}

// usable checks raw, the record read at key with remaining lifetime
// left, for the robots.txt URL url, and returns its result. The body is
// sb when sb is the one the record names, else read (see body). ok is
// false for a miss: for a value that cannot be read or checked (counted
// as a read error), for a record that names another URL than url, has
// no valid MAC under the record key, or outlives its TTL (refused:
// counted and logged, see refuse), for one that would be used past
// MaxTTL in total, and for an unreachable result this replica forgot
// (see forgotten); err is set when the store failed (it is then marked
// down).
func (s *Store) usable(ctx context.Context, key, url string, raw []byte, remaining time.Duration, sb *scriptBody) (a policy.Access, ok bool, err error) {
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
	var body []byte
	found := false
	if sb != nil && r.SHA256 != "" && sb.sha == r.SHA256 && sb.size == r.Size {
		body, found = sb.body, sb.found
	} else if body, found, err = s.body(ctx, r); err != nil {
		return a, false, err // the store failed
	}
	if !found {
		return a, false, nil // evicted: fetch again
	}
	if err := verify(s.o.RecordKey, key, raw, body); err != nil {
		s.refuse(key, refusedMAC, err)
		return a, false, nil
	}
	if err := s.current(r, remaining); err != nil {
		s.refuse(key, refusedAge, err)
		return a, false, nil
	}
	if s.forgotten(r) {
		return a, false, nil
	}
	if a, err = r.access(body, remaining, s.o.Parse); err != nil {
		s.unreadable(key, err)
		return policy.Access{}, false, nil
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

// forgotten reports whether r is an unreachable result fetched before
// this replica last forgot them (ForgetUnreachable): a miss. The times
// are two replicas' clocks: a skew between them costs at most one more
// fetch.
func (s *Store) forgotten(r record) bool {
	return r.Result == policy.Unreachable && r.FetchedAt.UnixNano() < s.unreachableBefore.Load()
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
func (s *Store) ttl(a policy.Access) time.Duration { return s.o.TTL(a) }

// share stores a's result at key, the key of the robots.txt URL url (its
// body first, so that a record never names a missing body), releases l
// (when its key is not "") and wakes the waiters of every replica, in
// one round trip (shareScript; in a Redis Cluster, the body goes in one
// before). The record names url (a result of another URL is not shared)
// and, with a record key, carries its MAC. A result that is not shared
// still releases l and wakes the waiters: one of them fetches. Failures
// are logged and counted; a stays this replica's result, and a lock not
// released expires after LockTTL.
func (s *Store) share(ctx context.Context, key, url string, a policy.Access, l lock) {
	raw, body, sha, ttl := s.sharedForm(key, url, a)
	cctx, cancel := s.ctx(ctx)
	defer cancel()
	keys := []string{key, l.key}
	if l.key == "" {
		keys[1] = key // no lock: the token "" deletes nothing
	}
	var err error
	switch {
	case raw != nil && sha != "":
		bodyKey, bodyTTL := s.key("body", sha), (ttl + bodyGrace).Milliseconds()
		if s.cluster {
			err = putBody.Run(cctx, s.rdb, []string{bodyKey}, body, bodyTTL).Err()
		} else {
			keys = append(keys, bodyKey)
		}
		if errors.Is(err, redis.Nil) {
			err = nil
		}
		if err == nil {
			err = shareScript.Run(cctx, s.rdb, keys, raw, ttl.Milliseconds(), l.token, s.channel, body, bodyTTL).Err()
		}
	case raw != nil:
		err = shareScript.Run(cctx, s.rdb, keys, raw, ttl.Milliseconds(), l.token, s.channel, "", 0).Err()
	default:
		err = shareScript.Run(cctx, s.rdb, keys, "", 0, l.token, s.channel, "", 0).Err()
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		s.failed(ctx, opWrite, err)
		return
	}
	s.h.ok()
}

// sharedForm returns the stored form of a's result at key, the key of
// the robots.txt URL url: the record, the body (nil without one) and
// how long it is shared, and the body's SHA-256 in hex ("" without a
// body); a nil record when a is not shared (logged).
func (s *Store) sharedForm(key, url string, a policy.Access) (raw, body []byte, sha string, ttl time.Duration) {
	ttl = s.ttl(a)
	if ttl < time.Millisecond {
		return nil, nil, "", 0 // max-age=0 with no minimum: nothing to share
	}
	r := newRecord(a, s.o.Parse.Limit(), ttl)
	if r.URL == "" {
		r.URL = url
	}
	if r.URL != url {
		s.o.Log.Warn().Str("key", key).Str("url", r.URL).Str("want_url", url).
			Msg("robots.txt result of another URL than its key's: kept by this replica only")
		return nil, nil, "", 0
	}
	raw, err := s.encode(r, key, a.Raw)
	if err != nil || len(raw) > maxRecordBytes || len(a.Raw) > s.o.Parse.Limit()+1 {
		s.o.Log.Warn().Err(err).Str("key", key).Int("record_bytes", len(raw)).
			Msg("robots.txt result too large to share: kept by this replica only")
		return nil, nil, "", 0
	}
	return raw, a.Raw, r.SHA256, ttl
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
