package live

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Event names of /live/events (the SSE "event:" field).
const (
	// EventHello opens every stream: HelloData.
	EventHello = "hello"
	// EventDecision is one audit line: DecisionData. Its id is
	// "BOOT-SEQ", which a reconnecting client sends back as
	// Last-Event-ID to resume after it.
	EventDecision = "decision"
	// EventSkipped says how many lines the stream skipped because it fell
	// behind the ring: SkippedData.
	EventSkipped = "skipped"
)

// HelloData is the data of the hello event.
type HelloData struct {
	// Replica names the process whose decisions the stream carries.
	Replica string `json:"replica"`
	// Chain reports whether lines carry a SHA-256 (audit.chain).
	Chain bool `json:"chain"`
	// AuditLog is the audit log's file, "" for standard output.
	AuditLog string `json:"audit_log"`
	// Kept is how many lines the ring holds now; RingBytes its size.
	Kept      uint64 `json:"kept"`
	RingBytes int    `json:"ring_bytes"`
	// MaxSubscribers is live.max_subscribers.
	MaxSubscribers int `json:"max_subscribers"`
	// Filter is the filter in force, as query parameters.
	Filter map[string][]string `json:"filter"`
}

// DecisionData is the data of a decision event.
type DecisionData struct {
	// SHA256 is the hex SHA-256 of the line as written, newline included:
	// the "prev" of the line after it; absent when audit.chain is off.
	SHA256 string `json:"sha256,omitempty"`
	// Line is the audit line, exactly as the log has it.
	Line json.RawMessage `json:"line"`
}

// SkippedData is the data of a skipped event.
type SkippedData struct {
	Skipped uint64 `json:"skipped"`
}

// serveEvents streams the decisions that pass the filter of the query
// (ParseFilter) as Server-Sent Events: hello, then the recent decisions
// the ring keeps, then each new one as the audit writer writes it. It
// ends when the client goes, when the server shuts down, or when a write
// takes longer than Options.WriteTimeout (the subscriber is dropped).
func (h *Hub) serveEvents(w http.ResponseWriter, r *http.Request) {
	f, err := ParseFilter(r.URL.Query())
	if err != nil {
		http.Error(w, "robotsproxy live: "+err.Error(), http.StatusBadRequest)
		return
	}
	sub, err := h.subscribe()
	if err != nil {
		w.Header().Set("Retry-After", "10")
		http.Error(w, "robotsproxy live: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer h.unsubscribe(sub)
	st := &stream{h: h, w: w, rc: http.NewResponseController(w), m: newMatcher(f)}
	_ = st.rc.SetReadDeadline(time.Time{}) // the admin listener's read timeout is for requests, not this answer
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // a reverse proxy in front must not buffer it
	hd.Set("X-Content-Type-Options", "nosniff")
	rd := h.ring.NewReader(h.start(f, r.Header.Get("Last-Event-ID"), st.m))
	st.hello(f)
	if !st.flush() {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		ents, skipped := rd.Read()
		if skipped > 0 {
			st.skipped(skipped)
		}
		for _, e := range ents {
			if st.m.match(e.Line) {
				st.decision(e)
			}
		}
		if len(st.out) > 0 && !st.flush() {
			return
		}
		if len(ents) > 0 {
			continue
		}
		select {
		case <-sub.wake:
		case <-tick.C:
			st.out = append(st.out, ": keep-alive\n\n"...)
			if !st.flush() {
				return
			}
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		}
	}
}

// start returns the sequence number a stream starts from: after
// lastID's when the client resumes a stream of this ring (the reader
// then counts what the ring no longer has as skipped), every line kept
// when it resumes one of an earlier process, else the f.Recent most
// recent lines that pass (every line kept when f.Recent is -1).
func (h *Hub) start(f Filter, lastID string, m *matcher) uint64 {
	oldest, next := h.ring.Bounds()
	if boot, seq, ok := strings.Cut(lastID, "-"); ok {
		if n, err := strconv.ParseUint(seq, 10, 64); err == nil && boot == h.boot {
			return n + 1
		}
		return oldest
	}
	switch {
	case f.Recent < 0:
		return oldest
	case f.Recent == 0:
		return next
	}
	last := make([]uint64, min(f.Recent, len(h.ring.spans))) // the seqs of the most recent matches, a ring
	found := 0
	rd := h.ring.NewReader(oldest)
	for {
		ents, _ := rd.Read()
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			if e.Seq < next && m.match(e.Line) {
				last[found%len(last)] = e.Seq
				found++
			}
		}
		if ents[len(ents)-1].Seq >= next {
			break
		}
	}
	switch {
	case found == 0:
		return next
	case found < len(last):
		return last[0]
	}
	return last[found%len(last)]
}

// stream is one subscriber's answer.
type stream struct {
	h   *Hub
	w   http.ResponseWriter
	rc  *http.ResponseController
	m   *matcher
	out []byte // events not written yet
}

func (st *stream) hello(f Filter) {
	oldest, next := st.h.ring.Bounds()
	o := st.h.opts
	data, _ := json.Marshal(HelloData{Replica: o.Replica, Chain: o.Chain, AuditLog: o.AuditLog, Kept: next - oldest,
		RingBytes: len(st.h.ring.arena), MaxSubscribers: o.MaxSubscribers, Filter: f.Query()})
	st.out = append(st.out, "retry: 3000\nevent: "+EventHello+"\ndata: "...)
	st.out = append(append(st.out, data...), "\n\n"...)
}

func (st *stream) decision(e Entry) {
	b := append(st.out, "id: "+st.h.boot+"-"...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, "\nevent: "+EventDecision+"\ndata: {"...)
	if e.Sum != [sha256.Size]byte{} {
		b = append(b, `"sha256":"`...)
		b = hex.AppendEncode(b, e.Sum[:])
		b = append(b, `",`...)
	}
	b = append(b, `"line":`...)
	b = append(b, e.Line...)
	st.out = append(b, "}\n\n"...)
}

func (st *stream) skipped(n uint64) {
	st.h.m.skipped.Add(float64(n))
	b := append(st.out, "event: "+EventSkipped+"\ndata: {\"skipped\":"...)
	b = strconv.AppendUint(b, n, 10)
	st.out = append(b, "}\n\n"...)
}

// flush writes the events queued within Options.WriteTimeout; false
// ends the stream: the client is gone, or it was too slow to take them
// (dropped and counted).
func (st *stream) flush() bool {
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.h.opts.WriteTimeout))
	_, err := st.w.Write(st.out)
	if err == nil {
		err = st.rc.Flush()
	}
	st.out = st.out[:0]
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			st.h.m.dropped.Inc()
		}
		return false
	}
	return true
}
