// Package politeness spaces and pauses a crawler's requests to an origin:
// the Crawl-delay a robots.txt group asks for, the back-off an origin asks
// for with 429 or 503 and Retry-After, and a cap on requests in flight per
// authority.
//
// A Limiter admits each request: it reserves the request's slot from a
// Scheduler, sleeps until then (or refuses the request when that is too
// far off), takes an in-flight slot from a Gate, claims the turn from the
// Scheduler, and returns a Ticket.
// The caller forwards the request, reports the origin's answer with
// Limiter.Observe and releases the Ticket when the response is done.
//
// # Counted from the send
//
// With Options.CountFromSend the turn is held from its claim until the
// request is sent, and the next one counts from that moment: the caller
// calls Ticket.Sending just before the request's first octet is written
// to the origin's connection and Ticket.Wrote just after that write
// returns (package proxy does it from its connections). The guarantee:
// two requests of one key are sent at least the delay apart, the second
// one's first write beginning no earlier than the delay after the first
// one's returned. A request not sent within Options.SendWithin is not
// sent at all; one that is never written gives its turn back; a second
// write of one request (a transport's retry, a paid retry) claims a turn
// of its own.
//
// # State kept per key
//
// A Key is one product token at one authority (scheme, host and port, as
// policy.Authority writes it). For each key a Scheduler keeps:
//
//   - the slot it last granted plus its crawl delay: the next slot is no
//     earlier (slots are handed out first come, first served);
//   - the send it last recorded plus its crawl delay: the next claim is
//     no earlier, even when a request woke up late for its slot (send to
//     send);
//   - the claim held, if any: its id and the end of its lease; no other
//     claim while it is held, and one never ended counts as sent when its
//     lease ends;
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
//   - Start(key, delay, lease, id): if now < hold return held; if now <
//     started return started-now; else write free = max(free, now+delay)
//     and, with a lease, hold = now+lease, claim = id, started =
//     hold+delay (without, started = now+delay).
//   - Sent(key, id, delay, ago, sent): when claim = id and hold is set,
//     clear hold and write started = now-ago+delay (free = max(free,
//     started)) when sent, started = now when not.
//   - Pause(key): return max(0, pause-now).
//   - Backoff(key, b): write pause = max(pause, now+p) where p is
//     b.RetryAfter or the doubled default (streak+1), with the same TTL.
//   - Succeeded(key): when now >= pause, delete the streak and the pause.
//
// A shared Scheduler should also implement Turnstile: one script that
// does Reserve, a Gate's Acquire without waiting and Start when the
// request may start at once, so that an allowed request costs one round
// trip to the store, and that takes Succeeded (and Sent) off the
// response's path.
//
// "now" should be the store's own clock (Redis TIME), so that proxies
// whose clocks differ agree on slots; the methods return durations, never
// times, for that reason. The TTL makes idle keys disappear, which bounds
// the store as LocalScheduler's eviction bounds memory. A Gate for a
// fleet needs leases that expire (a proxy that dies must not hold its
// slots forever): a sorted set per authority of lease ids scored by expiry
// works, with Acquire polling or waiting on a channel.
package politeness
