package testkit

import "time"

// Timing tests assert a gap at the origin: two requests of one crawler
// reach it at least the crawl delay apart; none reaches it before a
// back-off pause it asked for is over. Each gap is measured with the
// clock the property holds on:
//
//   - An arrival is the time the kernel received the request's first
//     octets (SO_TIMESTAMPNS: ArrivedAt), not the time the origin's
//     handler got to run, which on a busy machine comes any time later:
//     a handler late for one request and on time for the next makes the
//     gap look shorter than it was by that lateness, unbounded. On
//     loopback the kernel stamps a packet when the sender's write hands
//     it over (netif_rx), inside that write, before any deferred
//     delivery: an arrival lies within the write that sent it.
//   - The proxy counts a crawl-delay turn from the moment the previous
//     request's write returned (politeness.Options.CountFromSend), and a
//     back-off pause from the moment it read the answer that asked for
//     it, which is no earlier than that answer's first octet left the
//     origin. So an arrival minus the previous one, or minus a time taken
//     before the origin wrote its answer, is at least the delay or the
//     pause: with no slack for scheduling, which only makes gaps longer.
//   - What is left is the clocks: the kernel's stamps are on the wall
//     clock (CLOCK_REALTIME), the proxy spaces by the monotonic one. They
//     tick at one rate (NTP slews both); they part only when the wall
//     clock is stepped. ClockCheck measures that, and a gap is allowed
//     to be short by it: nothing, unless the clock was stepped.
//
// A fleet's spacing is kept on the shared store's clock (Redis TIME, the
// wall clock in microseconds), which adds the microseconds its scripts
// round to.

// ClockCheck measures how far the wall clock moved against the monotonic
// clock from its start: the error of a gap measured on the wall clock
// (kernel timestamps, Redis TIME) for a property kept on the monotonic
// one.
type ClockCheck struct{ start time.Time }

// NewClockCheck starts a ClockCheck now.
func NewClockCheck() ClockCheck { return ClockCheck{start: time.Now()} }

// readJitter is how far apart in time one time.Now reads the wall and
// the monotonic clocks (two reads, tens of nanoseconds apart), rounded up.
const readJitter = time.Microsecond

// Drift returns how far the wall clock moved against the monotonic one
// since the start, plus readJitter: the slack of a gap measured on the
// wall clock. It is readJitter unless the wall clock was stepped.
func (c ClockCheck) Drift() time.Duration {
	now := time.Now()
	d := now.Round(0).Sub(c.start.Round(0)) - now.Sub(c.start)
	return max(d, -d) + readJitter
}
