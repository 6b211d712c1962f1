// Package politeness spaces and pauses a crawler's requests to an origin:
// the Crawl-delay a robots.txt group asks for, the back-off an origin asks
// for with 429 or 503 and Retry-After, and a cap on requests in flight per
// authority.
//
// A Limiter admits each request: it reserves the request's slot from a
// Scheduler, sleeps until then (or refuses the request when that is too
// far off), takes an in-flight slot from a Gate, records the start with the
// Scheduler, and returns a Ticket.
// The caller forwards the request, reports the origin's answer with
// Limiter.Observe and releases the Ticket when the response is done.
//
// # State kept per key
//
// A Key is one product token at one authority (scheme, host and port, as
// policy.Authority writes it). For each key a Scheduler keeps:
//
//   - the slot it last granted plus its crawl delay: the next slot is no
//     earlier (slots are handed out first come, first served);
//   - the start it last recorded plus its crawl delay: the next start is
//     no earlier, even when a request woke up late for its slot (start to
//     start);
//   - the back-off pause: no start before it ends;
//   - the back-off streak: the number of 429 answers without Retry-After
//     since the last success, which doubles the next default pause.
//
// Slots are granted in the order Reserve is called (first come, first
// served): a request that arrives early is given the first free slot after
// every slot already granted, and keeps it while it waits.
//
// # A shared Scheduler for a fleet
//
// LocalScheduler and LocalGate keep their state in the process: several
// proxies in front of one origin each space their own requests. A fleet
// that must space its requests together implements Scheduler (and, for a
// fleet-wide in-flight cap, Gate) over a shared store such as Redis. Each
// Scheduler method is one atomic read-modify-write of one key's record, so
// a Redis implementation is one Lua script (or one WATCH/MULTI) per call:
//
//   - Reserve(key, delay, maxWait): read {free, started, pause}; at =
//     max(now, free, pause); if at-now > maxWait return not granted; else
//     write free = at+delay, with a TTL of max(free, started, pause)-now
//     plus a margin, and return at-now.
//   - Start(key, delay): if now < started return started-now; else write
//     started = now+delay and free = max(free, started).
//   - Pause(key): return max(0, pause-now).
//   - Backoff(key, b): write pause = max(pause, now+p) where p is
//     b.RetryAfter or the doubled default (streak+1), with the same TTL.
//   - Succeeded(key): when now >= pause, delete the streak and the pause.
//
// A shared Scheduler should also implement Turnstile: one script that
// does Reserve, a Gate's Acquire without waiting and Start when the
// request may start at once, so that an allowed request costs one round
// trip to the store, and that takes Succeeded off the response's path.
//
// "now" should be the store's own clock (Redis TIME), so that proxies
// whose clocks differ agree on slots; the methods return durations, never
// times, for that reason. The TTL makes idle keys disappear, which bounds
// the store as LocalScheduler's eviction bounds memory. A Gate for a
// fleet needs leases that expire (a proxy that dies must not hold its
// slots forever): a sorted set per authority of lease ids scored by expiry
// works, with Acquire polling or waiting on a channel.
package politeness
