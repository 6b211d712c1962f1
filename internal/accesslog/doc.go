// Package accesslog judges a web server's access log against the
// robots.txt that was in force when each request was made: the site
// owner's side of compliance auditing ("robotsproxy audit access-log").
//
// Each line is read (Combined Log Format or JSON lines, see Parser), its
// crawler identified by the proxy's own identification (package identity),
// its claimed identity checked against published IP ranges and, when a
// resolver is given, forward-confirmed reverse DNS (Verifier), and its
// path decided by the proxy's own decider (policy.DecideAccess) against
// every robots.txt version the crawler could legitimately have been using
// (History, Auditor): RFC 9309 2.4 lets a crawler cache robots.txt for up
// to 24 hours.
package accesslog
