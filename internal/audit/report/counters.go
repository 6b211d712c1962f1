package report

import "sort"

// maxSmallKeys bounds the summary's tables (decisions, reasons, access
// results, token sources): their values come from a short list written by
// the proxy, but a damaged or hostile log could hold any string. Past the
// bound, new keys are counted under otherKey.
const maxSmallKeys = 64

const otherKey = "(other)"

// small counts requests by a short string key, enforced and report-only
// apart (col 0 and 1). Keys are cut at maxKeyLen octets.
type small struct {
	m map[string]*[2]uint64
}

func (s *small) add(key []byte, col int) {
	if len(key) > maxKeyLen {
		key = key[:maxKeyLen]
	}
	if s.m == nil {
		s.m = make(map[string]*[2]uint64)
	}
	c, ok := s.m[string(key)]
	if !ok {
		k := string(key)
		if len(s.m) >= maxSmallKeys {
			k = otherKey
		}
		if c, ok = s.m[k]; !ok {
			c = new([2]uint64)
			s.m[k] = c
		}
	}
	c[col]++
}

// counts returns the rows, the largest total first, ties by key.
func (s *small) counts() []Count {
	out := make([]Count, 0, len(s.m))
	for k, c := range s.m {
		if k == "" {
			k = "(none)"
		}
		out = append(out, Count{Key: k, Total: c[0] + c[1], Enforced: c[0], ReportOnly: c[1]})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Total != out[b].Total {
			return out[a].Total > out[b].Total
		}
		return out[a].Key < out[b].Key
	})
	return out
}

// skips counts skipped lines by why, and remembers where the first was.
type skips struct {
	n      uint64
	first  string // "file:line"
	byWhy  map[string]uint64
	errors []InputError
	nErr   int
}

// maxInputErrors bounds the input errors listed (unreadable gzip streams,
// read errors); the rest are only counted.
const maxInputErrors = 20

func (s *skips) line(file string, line int, why error) {
	s.n++
	if s.first == "" {
		s.first = location(file, line)
	}
	if s.byWhy == nil {
		s.byWhy = make(map[string]uint64)
	}
	s.byWhy[why.Error()]++
}

func (s *skips) input(file string, line int, err error) {
	s.nErr++
	if len(s.errors) < maxInputErrors {
		s.errors = append(s.errors, InputError{File: file, Line: line, Error: err.Error()})
	}
}
