// Package report reads robotsproxy audit logs and reports what the
// crawlers did: "robotsproxy audit report".
//
// Collect streams the logs (plain, rotated, gzip recognised by its magic
// octets, or stdin) once, oldest file first, and keeps only bounded state;
// Render writes the Report as text, JSON, CSV or one self-contained HTML
// page with SVG charts.
//
// # Sections
//
//   - Integrity: whether the logs' hash chain was checked (verify.Verify,
//     chain only, alongside the reading) and holds, first and last line
//     hashes, checkpoints passed, lines that are not JSON.
//   - Summary: time span, lines, requests, skipped lines, and requests by
//     decision, reason, access result and token source, enforced and
//     report-only (enforced false) apart.
//   - Tokens: one row per crawler: allowed, denied by rule, would deny
//     (report mode), denied because unreachable, other refusals, distinct
//     hosts, token source.
//   - Violations: report-mode denials, one row per (token, host,
//     robots.txt URL, rule, rule line, robots_sha256, reason) with a count
//     and the first and last time seen. The reason is robots.txt's:
//     robots_reason when the line has it (a request that waited for
//     politeness is logged with the wait's cause as its reason), as audit
//     verify reads it; the Tokens columns split by it too, while the
//     Summary counts reasons as logged.
//   - Hosts (sites): one row per origin, scheme and authority as the
//     proxy keys robots.txt: requests, denials, access results,
//     unreachable spells and their duration, robots.txt versions.
//   - Rules (deciding rules) and denied URLs, the most frequent first.
//   - Spend (pay per crawl): lines with price, charged or not_paid; the
//     sum charged per currency (exact, in millionths of the unit), the
//     paid count and the unpaid 402s by not_paid reason, in total, per
//     identity ("user:NAME" when the line has a proxy user, else
//     "token:TOKEN") and per host.
//   - Timelines: decisions (all and per top token) and access results
//     per time bucket.
//
// # Bounds
//
// Memory grows neither with the number of lines nor with the length of
// their keys. Tables whose keys are unbounded (tokens, hosts, violations,
// rules, URLs, spend) are Space-Saving top-k tables bounded twice: by
// entries, Bounds capacities (defaults 1000, 10000, 20000, 5000, 5000), and by
// octets, Bounds.Bytes (default 48 MiB) split tokens 4/32, hosts 8/32,
// violations 8/32, rules 6/32, URLs 5/32 and spend 1/32 (half per
// identity, half per host; capacities 1000 and 10000). A table accounts each row's key
// octets, the heap its payload owns (a token's distinct-host counter and
// timeline, a host's robots.txt-version counter and last robots_sha256)
// and a fixed overhead for the row's entry, index and heap slots; when a
// new key would take it past its share, or a payload grows past it, the
// rows with the smallest counts are evicted first. So with keys of a few
// octets the capacities bind, and with long keys the octets do (with every
// key 2 KiB long, about 5,000 rows a table of 12 MiB). When a table
// evicts, Section.BoundHit is set (ByteBoundHit too when the octets made
// it) and rows carry their overestimate bound in Error; a key that makes
// more than 1/Tracked of its table's count is kept. Outside the tables
// the state is fixed: distinct counts are exact up to a cap, then
// HyperLogLog estimates (see distinct; at most 2 MiB each, eight of them),
// timelines have at most 240 buckets, the memo of sites (a url's
// authority to its origin) at most 16384 entries and 4 MiB, the
// summary's tables at most 64 keys each, two 256 KiB read buffers and one line of at most 1 MiB (a
// longer line is skipped). Keys are cut at 2048 octets.
//
// Accounting does not include the slack of the tables' growing slices
// and maps (at most their live size again, small next to the keys), nor
// the Go collector's headroom: with the default GOGC the process peaks at
// about twice its live heap. Measured, 40,000 lines whose every key is new
// and 2 KiB long (loggen.WriteUnique) peak at 130 to 150 MiB resident in
// every format; the command, which also checks the hash chain alongside
// (Options.Verify), at 180 to 190 MiB (the binary under /usr/bin/time,
// and up to 205 MiB writing CSV tables to a directory).
//
// Rendering holds the Report, whose rows share their strings with the
// tables, and writes it as it goes: no format builds its whole output in
// memory, and JSON encodes a row at a time into one reused buffer.
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
