package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/robotsproxy/robotsproxy/access"
	"github.com/robotsproxy/robotsproxy/robots"
)

// maxRecordBytes bounds a result record: URLs, the error text and the
// kept header fields of one fetch. A larger one is not shared (the
// replica keeps its result) and is unreadable when found.
const maxRecordBytes = 64 << 10

// record is a shared robots.txt result: the Access in the archive's form
// (access.Record), with the Cache-Control max-age and the TTL it was
// shared for.
type record struct {
	access.Record
	MaxAgeMS int64 `json:"max_age_ms"` // -1: no max-age
	TTLMS    int64 `json:"ttl_ms"`     // the TTL it was stored with
}

// newRecord returns the record of a, stored for ttl.
func newRecord(a access.Access, parseLimit int, ttl time.Duration) record {
	r := record{Record: access.NewRecord(a, parseLimit), MaxAgeMS: -1, TTLMS: ttl.Milliseconds()}
	if a.MaxAge >= 0 {
		r.MaxAgeMS = a.MaxAge.Milliseconds()
	}
	return r
}

// errUnreadable marks a shared value that cannot be used: a miss.
var errUnreadable = errors.New("unreadable shared value")

// decodeRecord parses and checks a record read from the store.
func decodeRecord(raw []byte, parseLimit int) (record, error) {
	var r record
	if len(raw) > maxRecordBytes {
		return r, fmt.Errorf("%w: record of %d octets, over %d", errUnreadable, len(raw), maxRecordBytes)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("%w: %v", errUnreadable, err)
	}
	switch {
	case r.ParseLimit != parseLimit:
		return r, fmt.Errorf("%w: parse limit %d, this replica's is %d", errUnreadable, r.ParseLimit, parseLimit)
	case r.Result != access.Successful && r.Result != access.Unavailable && r.Result != access.Unreachable:
		return r, fmt.Errorf("%w: access result %q", errUnreadable, r.Result)
	case (r.Result == access.Successful) != (r.SHA256 != ""):
		return r, fmt.Errorf("%w: a %s result with body hash %q", errUnreadable, r.Result, r.SHA256)
	case r.Size < 0 || r.Size > parseLimit+1:
		return r, fmt.Errorf("%w: body of %d octets, over the parse limit", errUnreadable, r.Size)
	case r.DurationMS < 0 || r.DurationMS > float64(time.Hour/time.Millisecond) || r.DurationMS != r.DurationMS:
		return r, fmt.Errorf("%w: duration %vms", errUnreadable, r.DurationMS)
	}
	return r, nil
}

// access rebuilds the Access of r with body (nil without one), compiling
// the body as the fetcher does, and remaining as its MaxAge: the local
// cache keeps it no longer than the shared copy lives. The body must hash
// to the record's SHA-256 and have its size.
func (r record) access(body []byte, remaining time.Duration, parse robots.Options) (access.Access, error) {
	a, err := r.Access(body, parse)
	if err != nil {
		return a, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	a.MaxAge = max(remaining, 0)
	return a, nil
}
