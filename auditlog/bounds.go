package auditlog

// Bounds of an audit line. A writer cuts every free-text field to at most
// MaxFieldBytes of encoded JSON (MinFieldBytes to MaxFieldBytesLimit,
// DefaultMaxFieldBytes by default) and a list to MaxListEntries entries of
// MaxListEntryBytes, so that a line it writes never exceeds
// MaxWrittenLineBytes whatever a client or an origin sends.
const (
	// MaxWrittenLineBytes is the documented upper bound of one audit line
	// the proxy writes, newline excluded.
	MaxWrittenLineBytes = 64 << 10
	// MinFieldBytes is the least allowed log.max_field_bytes.
	MinFieldBytes = 64
	// MaxFieldBytesLimit is the largest allowed log.max_field_bytes: at
	// most 12 free-text fields of this size, plus the fixed fields, stay
	// under MaxWrittenLineBytes.
	MaxFieldBytesLimit = 4096
	// DefaultMaxFieldBytes is log.max_field_bytes when it is not set.
	DefaultMaxFieldBytes = 2048
	// MaxListEntries bounds the entries of a list field (candidates,
	// purposes, usage_lines).
	MaxListEntries = 16
	// MaxListEntryBytes bounds each entry of a list field, in octets of
	// encoded JSON.
	MaxListEntryBytes = 128
)

// MaxLineBytes is the longest line every reader (audit verify, audit
// report) parses, newline excluded; a longer line is a bad line (verify
// still hashes it whole, for the chain) and is read past without being held
// in memory.
//
// It is 1 MiB: sixteen times MaxWrittenLineBytes, so every line the proxy
// writes, and any line a future version adds fields to, is read; and small
// enough that a corrupt log (a line with no newline for gigabytes) costs
// each reader at most 1 MiB of memory. A larger limit (4 MiB was one
// reader's) reads nothing more that the proxy can have written.
const MaxLineBytes = 1 << 20
