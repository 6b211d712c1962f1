// Package auditlog is the audit line's schema: the field names, the
// reason and cut_off values, the bounds a writer keeps to and a reader
// relies on, the one reader of a line (Scanner), and the one projection of
// a line that audit verify and audit report share (Line, Project), with
// the rules a reader applies to it (Line.RobotsTxtReason).
//
// robotsproxy writes one audit line per request: a JSON object on one
// line, its fields named by the Field constants. The proxy writes through
// these constants; audit verify, audit report and the log generator read
// through them and through Scanner, so that a line means the same to every
// reader. Package auditlog imports only the standard library, so that
// every other package can import it.
package auditlog
