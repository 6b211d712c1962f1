package politeness

import (
	"context"
	"errors"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// Cause says why a request waited or was refused: the audit reason of
// the wait or refusal (policy.Admission's WaitCause and Refused).
type Cause = policy.Reason

// The causes, each the audit reason it is recorded as.
const (
	// CauseCrawlDelay: the previous start of the same key was less than
	// the crawl delay ago.
	CauseCrawlDelay Cause = auditlog.ReasonCrawlDelay
	// CauseBackoff: the key is paused after a 429 or 503 answer.
	CauseBackoff Cause = auditlog.ReasonBackoff
	// CauseConcurrency: the authority had MaxConcurrentPerHost requests in
	// flight.
	CauseConcurrency Cause = auditlog.ReasonHostConcurrency
)

// Key names the requests one product token sends to one site:
// policy.PolitenessKey, which policy.Decision.PolitenessRequest makes.
type Key = policy.PolitenessKey

// Slot is a Scheduler's answer to Reserve.
type Slot struct {
	// Wait is how long from now until the start time: the start granted,
	// or, when Granted is false, the first start that could be granted.
	Wait time.Duration
	// Granted is true when Wait was within the maximum wait asked for and
	// the start is reserved for the caller.
	Granted bool
	// Cause says what set the start time: CauseBackoff when a back-off
	// pause, CauseCrawlDelay when the spacing after a previous start; ""
	// when Wait is 0.
	Cause Cause
}

// Backoff is an origin's request to slow down: a 429 or 503 answer.
type Backoff struct {
	// RetryAfter is the pause the origin asked for (its Retry-After field,
	// RFC 9110 10.2.3), valid when HasRetryAfter; the Scheduler caps it.
	RetryAfter time.Duration
	// HasRetryAfter is false for a 429 without (a valid) Retry-After: the
	// Scheduler pauses for its default back-off, doubled for each such
	// answer since the last success.
	HasRetryAfter bool
}

// ErrFull is returned by a Scheduler that cannot track another key: every
// key it holds is still active. The request is refused (fail closed).
var ErrFull = errors.New("politeness: too many active (product token, authority) keys")

// Scheduler grants start times per Key. Implementations are safe for
// concurrent use; each method is atomic for its key. See the package
// documentation for the contract a shared (fleet) implementation follows.
type Scheduler interface {
	// Reserve asks for a start time for key: the earliest time, not
	// before now, that is at least the delay of the key's last granted
	// start after that start, and not inside the key's back-off pause.
	// delay is the crawl delay of this request (0 for none), so the one
	// after it starts at least delay later. When the start is at most
	// maxWait from now it is granted and recorded; otherwise nothing is
	// recorded. An error (ErrFull, or a store's) means no slot.
	Reserve(ctx context.Context, key Key, delay, maxWait time.Duration) (Slot, error)
	// Start claims the key's turn to send a request that holds a slot
	// from Reserve, with the given crawl delay (above 0). The turn is free
	// when no other claim is held (Claim.Held) and the send recorded
	// before is at least its delay ago; otherwise Start records nothing
	// and says how long until then. It is the guarantee behind the
	// spacing: a request that woke up late for its slot cannot bring the
	// next one closer.
	//
	// With lease 0 the request counts as sent now. With a lease above 0
	// the claim is held until Sent ends it: no other claim is granted
	// meanwhile, and the request must be sent within lease. A claim never
	// ended counts as sent when its lease ends (a proxy that died).
	Start(ctx context.Context, key Key, delay, lease time.Duration) (Claim, error)
	// Sent ends claim id of key (from Start with a lease): the request's
	// first octet was written to the origin's connection ago before the
	// call (sent), or never (!sent: nothing reached the origin). The next
	// claim is granted no earlier than delay after that write. A claim
	// that is no longer the key's last (its lease ended and another was
	// granted) is left alone.
	Sent(ctx context.Context, key Key, id uint64, delay, ago time.Duration, sent bool) error
	// Pause returns how long the key's back-off pause lasts from now, 0
	// when the key is not paused.
	Pause(ctx context.Context, key Key) (time.Duration, error)
	// Backoff pauses key after a 429 or 503 answer and returns the pause
	// in force from now. A pause never shortens one already in force.
	Backoff(ctx context.Context, key Key, b Backoff) (time.Duration, error)
	// Succeeded records an answer that was no back-off: it clears the
	// key's back-off (pause and streak) when the pause has ended.
	Succeeded(ctx context.Context, key Key) error
}

// Claim is a Scheduler's answer to Start.
type Claim struct {
	// Wait is how long from now until the turn could be free; 0 when it
	// was claimed.
	Wait time.Duration
	// Held is true when another request holds the turn (claimed, not yet
	// sent): Wait is then only a lower bound, and the caller asks again.
	Held bool
	// ID names the claim for Sent, when one was held (Start with a
	// lease); 0 otherwise.
	ID uint64
}

// ErrNoTurn is returned by Turnstile.Turn when it cannot answer this call
// in one step (its store is unreachable, or gate is not its own): the
// Limiter makes the separate calls instead, which fall back as usual.
var ErrNoTurn = errors.New("politeness: no combined turn for this call")

// Turnstile is a Scheduler that can reserve a request's start, take its
// in-flight slot from gate and record its start in one atomic step: one
// round trip to a shared store instead of three. The Limiter uses it when
// its Scheduler implements it.
type Turnstile interface {
	Scheduler
	// Turn does what Reserve(key, delay, maxWait) does and, when the start
	// is granted with no wait, also what gate.Acquire(key.Authority,
	// false) does (gate nil: no cap) and, when that took a slot, what
	// Start(key, delay, lease) does. It returns ErrNoTurn when it cannot,
	// having done nothing.
	Turn(ctx context.Context, key Key, delay, maxWait, lease time.Duration, gate Gate) (Turn, error)
	// SucceededLater is Succeeded off the request's path: it may take
	// effect after it returns, and its errors are the Turnstile's to
	// count (the back-off it would clear ends by itself).
	SucceededLater(key Key)
}

// Turn is a Turnstile's answer.
type Turn struct {
	// Slot is Reserve's answer.
	Slot
	// Release gives back the in-flight slot taken, nil when none was.
	Release func()
	// Started is true when the turn was claimed too (as by Start): the
	// request may go ahead at once.
	Started bool
	// ID is the claim's, as Claim.ID.
	ID uint64
}
