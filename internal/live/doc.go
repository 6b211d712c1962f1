// Package live is the live view of one replica's decisions: the ring of
// the most recent audit lines, which the audit writer fills through its
// tap (Hub.Tap: a copy under a short lock, no allocation, no wait for a
// viewer), and what the admin listener serves from it (Hub.Routes):
//
//   - /live, one self-contained page with a strict Content-Security-
//     Policy, fed by
//   - /live/events, Server-Sent Events filtered on the server by product
//     token, host, decision and reason (Filter), each decision the audit
//     line exactly as written with its SHA-256;
//   - /live/line/SHA256, a line the ring keeps.
//
// A stream that lags skips what the ring no longer holds and is told how
// many (a skipped event); one whose writes stall for Options.WriteTimeout
// is dropped and counted; Options.MaxSubscribers caps them. The stream
// carries what the audit line carries and nothing more.
//
// Follow and Printer are the client side, robotsproxy watch.
package live
