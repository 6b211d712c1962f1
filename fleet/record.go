package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/robotsproxy/robotsproxy/access"
	"github.com/robotsproxy/robotsproxy/robots"
)

// maxRecordBytes bounds a result record: URLs, the error text and the
// kept header fields of one fetch. A larger one is not shared (the
// replica keeps its result) and is unreadable when found.
const maxRecordBytes = 64 << 10

// record is a shared robots.txt result: everything in access.Access but
// the compiled rules and the body, which is stored under its SHA-256.
type record struct {
	Result     access.AccessResult `json:"result"`
	URL        string              `json:"url"`
	FinalURL   string              `json:"final_url"`
	Status     int                 `json:"status"`
	Error      string              `json:"error,omitempty"`
	Refused    bool                `json:"refused,omitempty"`
	Cause      string              `json:"cause,omitempty"` // access.Cause's name; "" when none
	MaxAgeMS   int64               `json:"max_age_ms"`      // -1: no max-age
	DurationUS int64               `json:"duration_us"`
	FetchedAt  time.Time           `json:"fetched_at"`
	SHA256     string              `json:"sha256,omitempty"` // hex; "" without a body
	Size       int                 `json:"size,omitempty"`
	Header     http.Header         `json:"header,omitempty"`
	ParseLimit int                 `json:"parse_limit"`
	TTLMS      int64               `json:"ttl_ms"` // the TTL it was stored with
}

// newRecord returns the record of a, stored for ttl.
func newRecord(a access.Access, parseLimit int, ttl time.Duration) record {
	r := record{Result: a.Result, URL: a.URL, FinalURL: a.FinalURL, Status: a.Status, Refused: a.Refused,
		MaxAgeMS: -1, DurationUS: a.Duration.Microseconds(), FetchedAt: a.FetchedAt.UTC(),
		Header: a.Header, ParseLimit: parseLimit, TTLMS: ttl.Milliseconds()}
	if a.MaxAge >= 0 {
		r.MaxAgeMS = a.MaxAge.Milliseconds()
	}
	if a.Err != nil {
		r.Error = a.Err.Error()
	}
	r.Cause = a.Cause.String()
	if a.HasBody() {
		r.SHA256, r.Size = hex.EncodeToString(a.SHA256[:]), len(a.Raw)
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
	}
	return r, nil
}

// sum returns the record's body hash, or an error when it is not 64 hex
// digits.
func (r record) sum() ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	b, err := hex.DecodeString(r.SHA256)
	if err != nil || len(b) != sha256.Size {
		return sum, fmt.Errorf("%w: body hash %q", errUnreadable, r.SHA256)
	}
	copy(sum[:], b)
	return sum, nil
}

// access rebuilds the Access of r with body (nil without one), compiling
// the body as the fetcher does, and remaining as its MaxAge: the local
// cache keeps it no longer than the shared copy lives. The body must hash
// to the record's SHA-256 and have its size.
func (r record) access(body []byte, remaining time.Duration, parse robots.Options) (access.Access, error) {
	a := access.Access{Result: r.Result, URL: r.URL, FinalURL: r.FinalURL, Status: r.Status, Refused: r.Refused,
		MaxAge: max(remaining, 0), Duration: time.Duration(r.DurationUS) * time.Microsecond,
		FetchedAt: r.FetchedAt, Header: r.Header}
	if r.Error != "" {
		a.Err = errors.New(r.Error)
	}
	a.Cause = recordCause(r)
	if r.SHA256 == "" {
		return a, nil
	}
	sum, err := r.sum()
	if err != nil {
		return a, err
	}
	if len(body) != r.Size || sha256.Sum256(body) != sum {
		return a, fmt.Errorf("%w: body of %d octets does not match its record (%d octets, SHA-256 %s)",
			errUnreadable, len(body), r.Size, r.SHA256)
	}
	a.Raw, a.SHA256 = body, sum
	a.Robots = access.ParseBody(body, r.Header, parse)
	return a, nil
}

// recordCause returns the unreachable cause a record carries: CauseNone
// for any other result and for a record written without one, CauseOther
// for a name this replica does not know (written by a newer one).
func recordCause(r record) access.Cause {
	if r.Result != access.Unreachable {
		return access.CauseNone
	}
	c, ok := access.ParseCause(r.Cause)
	if !ok {
		return access.CauseOther
	}
	return c
}
