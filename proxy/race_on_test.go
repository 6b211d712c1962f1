//go:build race

package proxy_test

// Under the race detector sync.Pool drops items at random, so allocation
// counts vary; the tests that count allocations run without -race.
func init() { raceDetector = true }
