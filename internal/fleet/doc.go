// Package fleet shares robots.txt results and politeness state between the
// replicas of a robotsproxy fleet, in Redis 6+ or Valkey 7+.
//
// # robots.txt results
//
// The in-process access.Cache stays in front: a warm request makes no
// network round trip. Store.Fetch sits behind it, inside the cache's
// FetchFunc. On a local miss it reads the authority's shared result; on a
// hit it compiles the shared body itself (the compiled form never leaves
// the process) and hands the cache an Access whose MaxAge is the shared
// result's remaining lifetime, so that a result is used for no longer in
// total than the cache rules allow (RFC 9309 2.4). On a shared miss it
// takes the authority's fleet-wide lock (SET NX PX), fetches from the
// origin, stores the result and releases the lock; replicas that lost the
// lock wait for the result for at most the robots.txt timeout, then fetch
// themselves. The whole fleet thus makes one fetch per authority per TTL.
// Reading the record (with its body) or taking the lock is one script,
// one round trip (claimScript); storing body and record, unlocking and
// publishing the record key is another (shareScript). Waiters are woken
// by that publication (see wakes), not by polling.
//
// # Keys
//
// Every key starts with the configured prefix and the format version
// ("robotsproxy:v2:"). Values are bounded: a body is at most the parse
// limit plus one octet (what the fetcher reads), a record at most
// maxRecordBytes; a replica reads a value up to one octet past its bound
// (GETRANGE), so an oversize one is unreadable without being read whole.
//
//	PREFIX v2:robots:{SCHEME://AUTHORITY}   record (JSON), TTL = the cache TTL
//	PREFIX v2:body:SHA256                    body octets, once per SHA-256
//	PREFIX v2:lock:{SCHEME://AUTHORITY}      fetch lock, TTL = shared.lock_ttl
//	PREFIX v2:pace:{SCHEME://AUTHORITY} TOKEN politeness state (hash)
//	PREFIX v2:gate:{SCHEME://AUTHORITY}      in-flight leases (sorted set)
//	PREFIX v2:robots-shared                  pub/sub channel of shared record keys
//
// The braces are a Redis Cluster hash tag: an authority's politeness and
// in-flight keys are in one slot, and so are its record and lock, so
// that one script uses them together. A body, shared by hash across
// authorities, is in a slot of its own: in a cluster it is read and
// written in a round trip of its own.
//
// # Records are untrusted
//
// A record is used only when it names the robots.txt URL of its key's
// scheme and authority (policy.RobotsURL), so another authority's record
// copied under a key is a miss. With a record key (Options.RecordKey),
// every record ends with an HMAC-SHA256 over its octets, its body and its
// key name, and a record without a valid one is a miss. A record that
// outlives the TTL it was shared for is a miss too. Each such refusal is
// counted (robotsproxy_shared_records_refused_total) and logged at most
// once a minute; the replica fetches robots.txt and shares its own result.
//
// # Politeness
//
// Scheduler implements politeness.Scheduler with one Lua script per call,
// on the store's clock (Redis TIME), never read-modify-write from the
// replica; Gate implements politeness.Gate with expiring leases (a
// sorted set of lease ids scored by expiry, renewed while the request is
// in flight: the slots of a replica that dies come back within 30s).
// Scheduler is also a politeness.Turnstile: a request that may start at
// once reads the back-off, reserves its crawl-delay turn, takes its
// in-flight slot and claims its turn in one script (EVALSHA), one round
// trip. What it leaves to the store once it is sent and answered (the end
// of its claim, the success that clears an ended back-off, the release of
// its slot) is one script off its path: a goroutine sends these in
// pipelined batches, a millisecond after the first write of a batch, and
// Close sends what is queued. A
// politeness field that is not an integer in range (times in [0, now +
// 1 day], the streak in [0, 20]) makes the script answer an error, so
// the call uses the replica's local state; a reply outside the range of
// time.Duration is an error, so the request is refused.
//
// # When the store is unreachable
//
// Every replica falls back to fetching itself and to its local politeness
// state. The change of state is logged once each way, exported as
// robotsproxy_shared_up and reported by Ready (for /readyz, "degraded").
// Sharing resumes after a backoff, on the next use or readiness probe. A
// shared value that cannot be read or checked is a miss, never an allow.
package fleet
