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
)

// laterOp is one write sent off the requests' path: the release of an
// in-flight lease (ZREM key lease), the end of a claim on a politeness key
// (paced, sentScript), or, without either, Succeeded on a politeness key
// (succeededScript).
type laterOp struct {
	key, lease string
	paced      *sentOp
	// sent, when not nil, makes the op a marker: nothing is sent for it,
	// and sent is closed once the batch it is in was answered (Store.flushLater).
	sent chan struct{}
}

// sentOp is a politeness.Scheduler.Sent off the path.
type sentOp struct {
	id         string
	delay      time.Duration
	at         time.Time // the send, on this replica's clock
	wrote      bool      // sent, or never
	maxBackoff time.Duration
}

// args are sentScript's arguments; ago counts to now, when the batch is
// about to be sent, so that the send is placed no earlier on the store's
// clock than it was.
func (o *sentOp) args() []any {
	wrote := 0
	if o.wrote {
		wrote = 1
	}
	return []any{o.id, us(o.delay), us(max(0, time.Since(o.at))), wrote, us(o.maxBackoff)}
}

// later sends writes that no request waits for (releasing an in-flight
// slot, clearing an ended back-off) after the responses, in pipelined
// batches: what queues while one batch is on the wire goes in the next.
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

// flush sends batch in one pipeline. A script the store does not hold
// (NOSCRIPT, after a restart) is sent again with EVAL.
func (l *later) flush(batch []laterOp) {
	s := l.s
	ctx, cancel := s.ctx(context.Background())
	defer cancel()
	pipe := s.rdb.Pipeline()
	cmds := make([]redis.Cmder, len(batch))
	args := make([][]any, len(batch))
	for i, op := range batch {
		switch {
		case op.sent != nil:
			defer close(op.sent)
		case op.lease != "":
			cmds[i] = pipe.ZRem(ctx, op.key, op.lease)
		case op.paced != nil:
			args[i] = op.paced.args()
			cmds[i] = sentScript.EvalSha(ctx, pipe, []string{op.key}, args[i]...)
		default:
			cmds[i] = succeededScript.EvalSha(ctx, pipe, []string{op.key})
		}
	}
	if pipe.Len() == 0 {
		return
	}
	_, err := pipe.Exec(ctx)
	if err == nil {
		s.h.ok()
		return
	}
	var errs []error
	for i, c := range cmds {
		if c == nil {
			continue
		}
		err := c.Err()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			if batch[i].paced != nil {
				err = sentScript.Eval(ctx, s.rdb, []string{batch[i].key}, batch[i].paced.args()...).Err()
			} else {
				err = succeededScript.Eval(ctx, s.rdb, []string{batch[i].key}).Err()
			}
		}
		if err != nil && !errors.Is(err, redis.Nil) {
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
	sent := make(chan struct{})
	select {
	case s.later.ops <- laterOp{sent: sent}:
	case <-s.later.quit:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-sent:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
