package verify_test

import "time"

// t0 is when the tests' fetches happen.
var t0 = time.Date(2026, 11, 22, 20, 10, 50, 123456789, time.UTC)
