// Package access fetches, classifies and caches robots.txt files (RFC 9309
// 2.3 and 2.4): the Fetcher, the Cache (go-cache is its store) with its
// size accounting, ParseBody for a body fetched elsewhere, the Access
// result types (Successful, Unavailable, Unreachable; CacheState) and the
// hook a fleet's shared store plugs into.
package access
