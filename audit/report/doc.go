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
//   - Hosts: requests, denials, access results, unreachable spells and
//     their duration, robots.txt versions.
//   - Rules (deciding rules) and denied URLs, the most frequent first.
//   - Timelines: decisions (all and per top token) and access results
//     per time bucket.
//
// # Bounds
//
// Memory does not grow with the number of lines. Tables whose keys are
// unbounded (tokens, hosts, violations, rules, URLs) are Space-Saving
// top-k tables of Bounds capacity (defaults 1000, 10000, 20000, 5000,
// 5000); when more keys than that arrive, Section.BoundHit is set and
// rows carry their overestimate bound in Error. Distinct counts are exact
// up to a cap, then HyperLogLog estimates (see distinct). Timelines have
// at most 240 buckets. A line longer than 1 MiB is skipped; keys are cut
// at 2048 octets.
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
