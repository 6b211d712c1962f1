package fleet

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
// shared for, and, when the fleet has a record key, its MAC.
type record struct {
	access.Record
	MaxAgeMS int64 `json:"max_age_ms"` // -1: no max-age
	TTLMS    int64 `json:"ttl_ms"`     // the TTL it was stored with
	// MAC is the record's HMAC-SHA256 in hex (see mac), "" when the
	// writer had no record key.
	MAC string `json:"mac,omitempty"`
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

// macContext starts every MAC input: a MAC of anything else robotsproxy
// might sign with the same key never verifies as a record's.
const macContext = "robotsproxy shared robots.txt record v1\x00"

// errBadMAC marks a record whose MAC is missing or wrong for the
// replica's record key: a miss.
var errBadMAC = errors.New("record MAC missing or invalid")

// mac returns the HMAC-SHA256 under key of the record r stored at the
// store key name with body (nil without one): over name, r's canonical
// encoding (its JSON with MAC empty, as json.Marshal writes it) and the
// body's octets, each preceded by its length as 8 octets big-endian. The
// name binds the MAC to one authority (and key prefix): a genuine record
// copied under another key does not verify.
func (r record) mac(key []byte, name string, body []byte) ([]byte, error) {
	r.MAC = ""
	enc, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode record: %w", err)
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macContext))
	for _, part := range [][]byte{[]byte(name), enc, body} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil), nil
}

// seal sets r's MAC under key for the store key name and body; without a
// key it leaves r unsigned.
func (r *record) seal(key []byte, name string, body []byte) error {
	if len(key) == 0 {
		return nil
	}
	sum, err := r.mac(key, name, body)
	if err != nil {
		return err
	}
	r.MAC = hex.EncodeToString(sum)
	return nil
}

// verify checks r's MAC under key for the store key name and body; every
// record verifies without a key. The error wraps errBadMAC.
func (r record) verify(key []byte, name string, body []byte) error {
	if len(key) == 0 {
		return nil
	}
	got, err := hex.DecodeString(r.MAC)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: MAC %.80q is not %d hex digits", errBadMAC, r.MAC, 2*sha256.Size)
	}
	want, err := r.mac(key, name, body)
	if err != nil {
		return fmt.Errorf("%w: %w", errBadMAC, err)
	}
	if !hmac.Equal(got, want) {
		return fmt.Errorf("%w: does not match the record key", errBadMAC)
	}
	return nil
}
