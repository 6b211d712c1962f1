// Package rules holds the rules that the configuration (internal/config)
// and the runtime packages both apply to the same values, so that each
// has one home below both: the modes, the declared purposes, the form of
// a host list entry and of a Signature Agent Card, the bounds of a
// signature, the case-insensitive key of a product token, and the
// defaults and bounds of the robots.txt cache (RFC 9309 2.4),
// politeness, the shared store, signing and interception.
//
// It imports nothing of this module: config validates with it without
// depending on the runtime (policy, identity, fleet, egress, ...), and the
// runtime packages apply the same functions and constants. The product
// token itself is robots.IsProductToken (RFC 9309 2.2.1); pay per crawl's
// amounts are package money.
package rules
