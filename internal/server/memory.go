package server

import (
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// The soft memory limit beyond cache.max_bytes: a connection's buffers
// and state (perConnectionMemory for each of client.max_connections, or
// of unlimitedConnections when that is 0) and the rest of the process
// (baseMemory: the runtime, politeness state, robots.txt bodies being
// read). A cache filled to its bound runs under a limit of the bound
// plus 64 MiB with a peak resident set under the bound plus 128 MiB
// (access.BenchmarkCacheMemory). The Helm chart's memory rule is the same
// sum.
const (
	perConnectionMemory  = 64 << 10
	baseMemory           = 64 << 20
	unlimitedConnections = 4096
)

// MemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
// robotsproxy sets when GOMEMLIMIT is not in its environment, in octets:
// cache.max_bytes + 64 KiB × client.max_connections (4096 when 0) +
// 64 MiB; 832 MiB with the defaults. Without it the Go collector lets the
// heap grow to twice the live heap, and the resident set of a full cache
// is about twice cache.max_bytes. It is a soft limit: a process that
// needs more gets it, with more frequent collections.
func MemoryLimit(c config.Config) int64 {
	conns := c.Client.MaxConnections
	if conns <= 0 {
		conns = unlimitedConnections
	}
	return int64(c.Cache.MaxBytes) + int64(conns)*perConnectionMemory + baseMemory
}

// setMemoryLimit sets the soft memory limit of c with set (debug.
// SetMemoryLimit) unless getenv("GOMEMLIMIT") is set (then the runtime
// has applied it already), and logs which applies in one line.
func setMemoryLimit(c config.Config, getenv func(string) string, set func(int64) int64, log zerolog.Logger) {
	if v := getenv("GOMEMLIMIT"); v != "" {
		log.Info().Str("gomemlimit", v).Msg("soft memory limit from GOMEMLIMIT")
		return
	}
	limit := MemoryLimit(c)
	set(limit)
	log.Info().Int64("memory_limit_bytes", limit).Int("cache_max_bytes", c.Cache.MaxBytes).
		Int("client_max_connections", c.Client.MaxConnections).
		Msg("soft memory limit set to cache.max_bytes + 64 KiB per client.max_connections + 64 MiB (GOMEMLIMIT unset)")
}
