package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bounds of the writes sent off the requests' path.
const (
	// laterQueue is how many writes wait for the sender; a request that
	// finds the queue full waits for room (the store is slower than the
	// requests).
	laterQueue = 4096
	// laterBatch bounds the writes of one pipeline.
	laterBatch = 256
	// laterLinger is how long the sender waits, after the first write of
	// a batch, for the others: a request's send report, success and
	// release go together, once its response is on its way, and the
	// requests of that time with them. It delays the end of a claim
	// that long, far less than a crawl delay.
	laterLinger = time.Millisecond
)

// laterOp is one write sent off the requests' path: on the politeness
// key pace, the end of a claim (paced) or the success that clears an
// ended back-off (succeeded), and on the gate key gate, the release of
// the in-flight lease lease. The writes of one request go together in
// one endScript (see later.flush); a release without a politeness key
// (Gate.Acquire's) is a ZREM.
type laterOp struct {
	pace       string
	paced      *sentOp
	succeeded  bool
	maxBackoff time.Duration // politeness.max_backoff, for the key's TTL
	gate       string
	lease      string
	// answered, when not nil, makes the op a marker: nothing is sent for
	// it, and answered is closed once the batch it is in was answered
	// (Store.flushLater).
	answered chan struct{}
}

// sentOp is a politeness.Scheduler.Sent off the path.
type sentOp struct {
	id    string
	delay time.Duration
	at    time.Time // the send, on this replica's clock
	wrote bool      // sent, or never
}

// endCall is one endScript call: the writes of one politeness key in a
// batch (one request's, in the usual case).
type endCall struct {
	pace, gate string
	paced      *sentOp
	succeeded  bool
	maxBackoff time.Duration
	leases     []string
}

// add merges op into c, or reports false when c has a claim to end and
// op too (two sends of one key in one batch: two calls).
func (c *endCall) add(op laterOp) bool {
	if op.paced != nil && c.paced != nil || op.lease != "" && c.gate != "" && c.gate != op.gate {
		return false
	}
	if op.paced != nil {
		c.paced = op.paced
	}
	c.succeeded = c.succeeded || op.succeeded
	c.maxBackoff = max(c.maxBackoff, op.maxBackoff)
	if op.lease != "" {
		c.gate, c.leases = op.gate, append(c.leases, op.lease)
	}
	return true
}

// keys and args are endScript's; ago counts to now, when the batch is
// about to be sent, so that the send is placed no earlier on the store's
// clock than it was.
func (c *endCall) keys() []string {
	if c.gate == "" {
		return []string{c.pace}
	}
	return []string{c.pace, c.gate}
}

func (c *endCall) args() []any {
	args := make([]any, 6, 6+len(c.leases))
	args[0], args[1], args[2], args[3] = "", 0, 0, 0
	if o := c.paced; o != nil {
		args[0], args[1], args[2] = o.id, us(o.delay), us(max(0, time.Since(o.at)))
		if o.wrote {
			args[3] = 1
		}
	}
	args[4], args[5] = us(c.maxBackoff), 0
	if c.succeeded {
		args[5] = 1
	}
	for _, id := range c.leases {
		args = append(args, id)
	}
	return args
}

// later sends writes that no request waits for (releasing an in-flight
// slot, clearing an ended back-off, ending a claim) after the responses,
// in pipelined batches: a batch is sent laterLinger after its first write,
// and what queues while one batch is on the wire goes in the next.
// A write that fails is counted and dropped: a lease expires by itself
// (leaseTTL), a back-off ends by itself.
type later struct {
	s    *Store
	ops  chan laterOp
	quit chan struct{} // closed by stop: no more sends
	done chan struct{} // closed when the last batch is sent
	once sync.Once     // closes quit
}

// startLater starts the sender of s.
func startLater(s *Store) *later {
	l := &later{s: s, ops: make(chan laterOp, laterQueue), quit: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// send queues op; after stop it drops it.
func (l *later) send(op laterOp) {
	select {
	case <-l.quit:
	case l.ops <- op:
	}
}

// stop sends what is queued, then returns; later sends are dropped.
func (l *later) stop() {
	l.once.Do(func() { close(l.quit) })
	<-l.done
}

func (l *later) run() {
	defer close(l.done)
	batch := make([]laterOp, 0, laterBatch)
	for {
		var quit bool
		select {
		case op := <-l.ops:
			batch = append(batch, op)
			if op.answered == nil { // a marker (flushLater) waits for nothing
				quit = l.linger()
			}
		case <-l.quit:
			quit = true
		}
	fill:
		for len(batch) < laterBatch {
			select {
			case op := <-l.ops:
				batch = append(batch, op)
			default:
				break fill
			}
		}
		if len(batch) > 0 {
			l.flush(batch)
			batch = batch[:0]
		}
		if quit && len(l.ops) == 0 {
			return
		}
	}
}

// linger waits laterLinger, or until stop; it reports whether stop was
// called. The writes queued meanwhile wake nobody: the sender does not
// receive them until the wait is over.
func (l *later) linger() (quit bool) {
	t := time.NewTimer(laterLinger)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-l.quit:
		return true
	}
}

// flush sends batch in one pipeline: one endScript per politeness key
// (a request's claim end, success and release together), a ZREM per
// release without one. A script the store does not hold (NOSCRIPT, after
// a restart) is sent again with EVAL.
func (l *later) flush(batch []laterOp) {
	s := l.s
	var calls []endCall
	var zrems []laterOp
	last := map[string]int{} // the last call of each politeness key
	for _, op := range batch {
		switch {
		case op.answered != nil:
			defer close(op.answered)
		case op.pace == "":
			zrems = append(zrems, op)
		default:
			if i, ok := last[op.pace]; ok && calls[i].add(op) {
				continue
			}
			last[op.pace] = len(calls)
			calls = append(calls, endCall{pace: op.pace})
			calls[len(calls)-1].add(op)
		}
	}
	if len(calls)+len(zrems) == 0 {
		return
	}
	ctx, cancel := s.ctx(context.Background())
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(calls))
	for i := range calls {
		cmds[i] = endScript.EvalSha(ctx, pipe, calls[i].keys(), calls[i].args()...)
	}
	zcmds := make([]*redis.IntCmd, len(zrems))
	for i, op := range zrems {
		zcmds[i] = pipe.ZRem(ctx, op.gate, op.lease)
	}
	_, err := pipe.Exec(ctx)
	if err == nil {
		s.h.ok()
		return
	}
	var errs []error
	for i, c := range cmds {
		err := c.Err()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			err = endScript.Eval(ctx, s.rdb, calls[i].keys(), calls[i].args()...).Err()
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			errs = append(errs, err)
		}
	}
	for _, c := range zcmds {
		if err := c.Err(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		s.h.failed(opPoliteness, errors.Join(errs...))
	}
}

// flushLater waits until the writes queued off the path before it are
// answered, or ctx ends.
func (s *Store) flushLater(ctx context.Context) error {
	answered := make(chan struct{})
	select {
	case s.later.ops <- laterOp{answered: answered}:
	case <-s.later.quit:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-answered:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
