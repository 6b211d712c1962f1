package identity

import (
	"context"
	"crypto/sha256"
	"strconv"
	"sync"

	"github.com/robotsproxy/robotsproxy/policy"
)

// VerifiedMax is verifiedMax, the bound of a Pinner's memo.
const VerifiedMax = verifiedMax

// VerifiedLen returns how many credentials p remembers as verified.
func VerifiedLen(p *Pinner) int {
	return p.verified.Len()
}

// FillVerified adds n made-up entries to p's memo, as if n other headers
// had been verified, for tests of the memo's bound.
func FillVerified(p *Pinner, n int) {
	for i := range n {
		p.verified.Put(sha256.Sum256([]byte("filler "+strconv.Itoa(i))), policy.Pin{})
	}
}

// BreakPasswordHash replaces user's stored bcrypt hash with one that no
// password matches, so that a later successful Pin for that user proves the
// memo answered without running bcrypt.
func BreakPasswordHash(p *Pinner, user string) {
	p.hashes[user] = []byte("$2a$04$invalidinvalidinvalidinvalidinvalidinvalidinvalidinval")
}

// ThrottleMaxKeys is throttleMaxKeys, the bound of the keys a Pinner's
// throttle tracks.
const ThrottleMaxKeys = throttleMaxKeys

// TrackedKeys returns how many client addresses and user names p's
// throttle tracks.
func TrackedKeys(p *Pinner) int { return p.throttle.len() }

// BcryptCounter counts the bcrypt comparisons of a Pinner.
type BcryptCounter struct {
	mu             sync.Mutex
	calls, running int
	maxRunning     int
}

// Counts returns the comparisons made and the most that ran at once.
func (c *BcryptCounter) Counts() (calls, maxRunning int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.maxRunning
}

// CountBcrypt wraps p's bcrypt comparison (still the real one) with c;
// call it before p is used.
func CountBcrypt(p *Pinner) *BcryptCounter {
	c := &BcryptCounter{}
	real := p.bcrypt
	p.bcrypt = func(hash, password []byte) error {
		c.mu.Lock()
		c.calls++
		c.running++
		c.maxRunning = max(c.maxRunning, c.running)
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.running--
			c.mu.Unlock()
		}()
		return real(hash, password)
	}
	return c
}

// HoldCheckSlots takes n of p's bcrypt slots, as n running checks would,
// until release is called.
func HoldCheckSlots(p *Pinner, n int) (release func()) {
	if err := p.checks.Acquire(context.Background(), int64(n)); err != nil {
		panic(err)
	}
	return func() { p.checks.Release(int64(n)) }
}

// MemoLen returns how many identities id remembers.
func MemoLen(id *Identifier) int {
	return id.memo.Len()
}
