package report

// The payloads of the top-k tables: what each row counts besides its
// requests. Their zero values are ready to use (a payload is zeroed when
// its slot passes to another key).

// tokenSources are the token_source values the proxy writes, in the order
// of tokenStats.sources; anything else counts as the last, "other".
var tokenSources = [...]string{"credentials", "client-range", "user-agent", "catalogue", "override", "default", "other"}

type tokenStats struct {
	byClass [classNotDecided + 1]uint64
	hosts   distinct // zero value: exact up to smallExactCap
	sources [len(tokenSources)]uint64
	tl      timeline
}

// heapBytes is the heap octets the payload owns, for the budget.
func (t *tokenStats) heapBytes() int { return t.hosts.heapBytes() + t.tl.heapBytes() }

func (t *tokenStats) add(r *record, c class, host []byte) {
	t.byClass[c]++
	t.hosts.addBytes(host)
	s := len(tokenSources) - 1
	for i, name := range tokenSources[:s] {
		if string(r.TokenSource) == name {
			s = i
			break
		}
	}
	if len(r.TokenSource) > 0 {
		t.sources[s]++
	}
	t.tl.add(r.Time, slotOf(c))
}

type hostStats struct {
	denied, wouldDeny uint64
	access            [4]uint64 // by accessSlot
	versions          distinct
	lastSHA           string // cut at maxKeyLen
	spells            uint64
	unreachableSecs   int64
	inSpell           bool
	spellStart        int64
	spellLast         int64
}

// heapBytes is the heap octets the payload owns, for the budget.
func (h *hostStats) heapBytes() int { return h.versions.heapBytes() + len(h.lastSHA) }

func (h *hostStats) add(r *record, c class) {
	switch c {
	case classWouldDeny:
		h.wouldDeny++
	case classDeniedRule, classDeniedUnreachable, classOtherRefusal:
		h.denied++
	}
	if len(r.RobotsSHA256) > 0 {
		h.versions.addBytes(r.RobotsSHA256)
		sha := r.RobotsSHA256
		if len(sha) > maxKeyLen { // a hostile value: a real one has 64 hex digits
			sha = sha[:maxKeyLen]
		}
		if string(sha) != h.lastSHA {
			h.lastSHA = string(sha)
		}
	}
	if len(r.Access) == 0 {
		return
	}
	slot := accessSlot(r.Access)
	h.access[slot]++
	switch {
	case slot == slotUnreachable && !h.inSpell:
		h.inSpell, h.spellStart, h.spellLast = true, r.Time, r.Time
		h.spells++
	case slot == slotUnreachable:
		h.spellStart = min(h.spellStart, r.Time)
		h.spellLast = max(h.spellLast, r.Time)
	case h.inSpell:
		h.endSpell()
	}
}

func (h *hostStats) endSpell() {
	h.unreachableSecs += h.spellLast - h.spellStart
	h.inSpell = false
}

type violation struct {
	first, last int64
	seen        bool
}

func (v *violation) add(ts int64) {
	if !v.seen || ts < v.first {
		v.first = ts
	}
	if !v.seen || ts > v.last {
		v.last = ts
	}
	v.seen = true
}

type ruleStats struct{ allowed, denied, wouldDeny uint64 }

func (s *ruleStats) add(c class) {
	switch c {
	case classAllowed:
		s.allowed++
	case classWouldDeny:
		s.wouldDeny++
	case classDeniedRule, classDeniedUnreachable, classOtherRefusal:
		s.denied++
	}
}

type urlStats struct{ denied, wouldDeny uint64 }

func (s *urlStats) add(c class) {
	if c == classWouldDeny {
		s.wouldDeny++
	} else {
		s.denied++
	}
}
