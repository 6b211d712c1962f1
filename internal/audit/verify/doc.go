// Package verify is the offline audit verifier behind `robotsproxy audit
// verify` and the chain check of `audit report`: it reads audit logs
// (rotated files oldest first, plain or gzip) and checks the hash chain
// that package audit writes, its checkpoints and head, the signature keys
// archived with the robots.txt archive, and decides every decision line
// again from the archived robots.txt (RFC 9309 2.2.2, 2.3.1) through
// package policy, as the proxy decided it.
//
// It sits above the runtime writer (package audit), which the proxy uses
// and which imports nothing of policy: verifying is a tool, run after the
// fact, never on a request's path.
package verify
