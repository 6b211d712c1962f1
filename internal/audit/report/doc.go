// Package report reads robotsproxy audit logs and reports what the
// crawlers did: "robotsproxy audit report".
//
// Collect streams the logs (plain, rotated, gzip recognised by its magic
// octets, or stdin) once, oldest file first, and keeps only bounded state;
// Render writes the Report as text, JSON, CSV or one self-contained HTML
// page with SVG charts (internal/chart).
//
// # Sections
//
// Integrity (the hash chain, checked by verify.Verify alongside the
// reading), Summary, Tokens (one row per crawler), Violations (report-mode
// denials), Hosts (one row per origin, as the proxy keys robots.txt),
// Rules, DeniedURLs, Spend (pay per crawl) and Timelines: each field of
// Report says what its section counts. A reason is robots.txt's
// (robots_reason when the line has it, as audit verify reads it) in the
// Tokens and Violations columns; the Summary counts reasons as logged.
//
// # Bounds
//
// Memory grows neither with the number of lines nor with the length of
// their keys. Tables whose keys are unbounded are Space-Saving top-k
// tables (topK) bounded by entries and by octets (Bounds); when a table
// evicts, its Section says so and rows carry their overestimate bound.
// Outside the tables the state is fixed: distinct counts are exact up to a
// cap, then HyperLogLog estimates (distinct), timelines have at most
// maxBuckets buckets, the memo of sites at most maxSites entries, the
// summary's tables at most maxSmallKeys keys each, and a line at most
// auditlog.MaxLineBytes (a longer line is skipped). Keys are cut at
// maxKeyLen octets. The accounting leaves out the slack of growing slices
// and maps and the collector's headroom: with the default GOGC the process
// peaks at about twice its live heap (docs/auditing.md gives the peaks
// measured). Rendering writes as it goes: no format builds its whole
// output in memory (JSON encodes a row at a time).
//
// # Bad input
//
// Lines that are not JSON objects, truncated lines, lines without a
// decision or time, and fields of the wrong type are skipped and counted
// by reason, with the place of the first. An unreadable gzip stream or a
// read error ends that log, is listed in Summary.InputErrors, and the
// report goes on with the next log. Lines without "enforced" (written
// before report mode existed) count as enforced.
package report
