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

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// maxRecordBytes bounds a result record: URLs, the error text and the
// kept header fields of one fetch. A larger one is not shared (the
// replica keeps its result) and is unreadable when found.
const maxRecordBytes = 64 << 10

// record is a shared robots.txt result: the Access in the archive's form
// (access.Record), with the Cache-Control max-age and the TTL it was
// shared for. With a record key, the stored JSON ends with its MAC (see
// seal).
type record struct {
	access.Record
	MaxAgeMS int64 `json:"max_age_ms"` // -1: no max-age
	TTLMS    int64 `json:"ttl_ms"`     // the TTL it was stored with
}

// newRecord returns the record of a, stored for ttl.
func newRecord(a policy.Access, parseLimit int, ttl time.Duration) record {
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
	case r.Result != policy.Successful && r.Result != policy.Unavailable && r.Result != policy.Unreachable:
		return r, fmt.Errorf("%w: access result %q", errUnreadable, r.Result)
	case (r.Result == policy.Successful) != (r.SHA256 != ""):
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
func (r record) access(body []byte, remaining time.Duration, parse robots.Options) (policy.Access, error) {
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

// macField starts the MAC a sealed record ends with: the record's JSON
// object gets one last member, "mac", the HMAC-SHA256 in hex (see seal).
// No record field is named mac, so a reader without a key ignores it.
const macField = `,"mac":"`

// macSuffixLen is the length of the member seal appends, closing brace
// included.
const macSuffixLen = len(macField) + 2*sha256.Size + len(`"}`)

// errBadMAC marks a record whose MAC is missing or wrong for the
// replica's record key: a miss.
var errBadMAC = errors.New("record MAC missing or invalid")

// recordMAC returns the HMAC-SHA256 under key of the record octets raw
// stored at the store key name with body (nil without one): over name,
// raw and body, each preceded by its length as 8 octets big-endian, after
// macContext. The name binds the MAC to one authority (and key prefix): a
// genuine record copied under another key does not verify.
func recordMAC(key []byte, name string, raw, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macContext))
	for _, part := range [][]byte{[]byte(name), raw, body} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}

// seal returns raw, the JSON object of the record stored at name with
// body, with its MAC under key as a last member "mac"; without a key it
// returns raw unchanged. The MAC covers raw's exact octets, so it does
// not depend on how a reader would encode the record again.
func seal(key []byte, name string, raw, body []byte) []byte {
	if len(key) == 0 || len(raw) < 2 || raw[len(raw)-1] != '}' {
		return raw
	}
	sum := recordMAC(key, name, raw, body)
	out := make([]byte, 0, len(raw)+macSuffixLen-1)
	out = append(out, raw[:len(raw)-1]...)
	out = append(out, macField...)
	out = hex.AppendEncode(out, sum)
	return append(out, `"}`...)
}

// verify checks that raw, the record read at the store key name with
// body, ends with a MAC seal made under key over the rest of raw; every
// record verifies without a key. The error wraps errBadMAC. The record
// decoded from raw is the one signed: the "mac" member is no field of it.
func verify(key []byte, name string, raw, body []byte) error {
	if len(key) == 0 {
		return nil
	}
	n := len(raw) - macSuffixLen
	if n < 1 || string(raw[n:n+len(macField)]) != macField || string(raw[len(raw)-2:]) != `"}` {
		return fmt.Errorf("%w: no MAC", errBadMAC)
	}
	got, err := hex.DecodeString(string(raw[n+len(macField) : len(raw)-2]))
	if err != nil {
		return fmt.Errorf("%w: MAC not hex", errBadMAC)
	}
	signed := append(raw[:n:n], '}')
	if !hmac.Equal(got, recordMAC(key, name, signed, body)) {
		return fmt.Errorf("%w: does not match the record key", errBadMAC)
	}
	return nil
}
