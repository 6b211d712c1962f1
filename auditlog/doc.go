// Package auditlog is the audit line's schema: the field names, the
// reason and cut_off values, the bounds a writer keeps to and a reader
// relies on, and the one reader of a line (Scanner).
//
// robotsproxy writes one audit line per request: a JSON object on one
// line, its fields named by the Field constants. The proxy writes through
// these constants; audit verify, audit report and the log generator read
// through them and through Scanner, so that a line means the same to every
// reader. Package auditlog imports only the standard library, so that
// every other package can import it.
package auditlog
