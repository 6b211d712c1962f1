package access

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Record is an Access as JSON, the one form in which robots.txt fetches
// are written down: one file per fetch in the audit archive, one value per
// authority in a fleet's shared store. It holds everything but the
// compiled rules and the body, which is named by its SHA-256.
type Record struct {
	// URL is the robots.txt URL requested; FinalURL the one that answered
	// after redirects.
	URL      string `json:"url"`
	FinalURL string `json:"final_url,omitempty"`
	// Status is the HTTP status, 0 when no response came.
	Status int `json:"status"`
	// Result is the access result (RFC 9309 2.3.1): successful,
	// unavailable or unreachable.
	Result policy.AccessResult `json:"access_result"`
	// Refused is true when the destination guard refused the address.
	Refused bool `json:"refused,omitempty"`
	// Error is the fetch error, if any.
	Error string `json:"error,omitempty"`
	// Cause is an unreachable result's cause class (Cause.String), ""
	// for any other result.
	Cause string `json:"cause,omitempty"`
	// FetchedAt is when the fetch began, in UTC; DurationMS how long it
	// took, in milliseconds (microsecond precision).
	FetchedAt  time.Time `json:"fetched_at"`
	DurationMS float64   `json:"duration_ms"`
	// SHA256 is the body's SHA-256 in hex, "" when no body was read
	// (every result but successful); Size its length in octets.
	SHA256 string `json:"sha256,omitempty"`
	Size   int    `json:"size"`
	// Header holds the response's Content-Type, Cache-Control,
	// Last-Modified and ETag fields.
	Header http.Header `json:"header,omitempty"`
	// ParseLimit is the parse limit in octets the body was parsed with
	// (robots.Options.Limit).
	ParseLimit int `json:"parse_limit"`
}

// NewRecord returns the record of a, whose body was parsed with
// parseLimit.
func NewRecord(a policy.Access, parseLimit int) Record {
	r := Record{URL: a.URL, FinalURL: a.FinalURL, Status: a.Status, Result: a.Result,
		Refused: a.Refused, FetchedAt: a.FetchedAt.UTC(), Header: a.Header, ParseLimit: parseLimit,
		DurationMS: float64(a.Duration.Microseconds()) / 1000}
	if a.Err != nil {
		r.Error = a.Err.Error()
	}
	if a.Result == policy.Unreachable {
		r.Cause = a.Cause.String()
	}
	if a.HasBody() {
		r.SHA256, r.Size = hex.EncodeToString(a.SHA256[:]), len(a.Raw)
	}
	return r
}

// ErrRecordMismatch: a body does not match its record's size and SHA-256,
// or the record's SHA-256 is not 64 hex digits.
var ErrRecordMismatch = errors.New("body does not match its record")

// Sum returns the record's body hash, or an error wrapping
// ErrRecordMismatch when it is not 64 hex digits.
func (r Record) Sum() ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	b, err := hex.DecodeString(r.SHA256)
	if err != nil || len(b) != sha256.Size {
		return sum, fmt.Errorf("%w: body hash %q", ErrRecordMismatch, r.SHA256)
	}
	copy(sum[:], b)
	return sum, nil
}

// Access rebuilds the Access of r with body (nil without one), compiling
// the body as the Fetcher does (see ParseBody). MaxAge is left -1 (none):
// a record does not keep it. The body must hash to the record's SHA-256
// and have its size, else the error wraps ErrRecordMismatch.
func (r Record) Access(body []byte, parse robots.Options) (policy.Access, error) {
	a := policy.Access{Result: r.Result, URL: r.URL, FinalURL: r.FinalURL, Status: r.Status, Refused: r.Refused,
		MaxAge: -1, Duration: time.Duration(math.Round(r.DurationMS*1000)) * time.Microsecond,
		FetchedAt: r.FetchedAt, Header: r.Header}
	if r.Error != "" {
		a.Err = errors.New(r.Error)
	}
	a.Cause = r.cause()
	if r.SHA256 == "" {
		return a, nil
	}
	sum, err := r.Sum()
	if err != nil {
		return a, err
	}
	if len(body) != r.Size || sha256.Sum256(body) != sum {
		return a, fmt.Errorf("%w: body of %d octets (record: %d octets, SHA-256 %s)", ErrRecordMismatch, len(body), r.Size, r.SHA256)
	}
	a.Raw, a.SHA256 = body, sum
	a.Robots = ParseBody(body, r.Header, parse)
	return a, nil
}

// cause returns the unreachable cause r carries: CauseNone for any other
// result and for a record written without one, CauseOther for a name this
// version does not know (written by a newer one).
func (r Record) cause() policy.Cause {
	if r.Result != policy.Unreachable {
		return policy.CauseNone
	}
	c, ok := policy.ParseCause(r.Cause)
	if !ok {
		return policy.CauseOther
	}
	return c
}
