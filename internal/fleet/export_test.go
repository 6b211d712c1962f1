package fleet

import "testing"

// StartRedis starts a redis-server for the tests of package fleet_test
// (skipping when there is none) and returns its URL.
func StartRedis(t testing.TB) string { return startRedis(t).URL() }
