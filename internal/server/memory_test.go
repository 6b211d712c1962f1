package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// TestSetMemoryLimit: without GOMEMLIMIT the soft memory limit is
// cache.max_bytes + 64 KiB per client connection + 64 MiB, logged in one
// line; GOMEMLIMIT wins.
func TestSetMemoryLimit(t *testing.T) {
	tests := []struct {
		name      string
		maxBytes  int
		conns     int
		env       string
		wantLimit int64 // -1: not set
		wantLog   string
	}{
		{"defaults", 512 << 20, 4096, "", 832 << 20, `"memory_limit_bytes":872415232`},
		{"small cache, few connections", 1 << 20, 16, "", 66 << 20, `"memory_limit_bytes":69206016`},
		{"no connection cap", 128 << 20, 0, "", 448 << 20, `"memory_limit_bytes":469762048`},
		{"GOMEMLIMIT set", 512 << 20, 4096, "1GiB", -1, `"gomemlimit":"1GiB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Cache.MaxBytes, cfg.Client.MaxConnections = tt.maxBytes, tt.conns
			got := int64(-1)
			var buf bytes.Buffer
			setMemoryLimit(cfg, func(k string) string {
				if k == "GOMEMLIMIT" {
					return tt.env
				}
				return ""
			}, func(n int64) int64 { got = n; return 0 }, zerolog.New(&buf))
			if got != tt.wantLimit {
				t.Errorf("limit set: got %d, want %d", got, tt.wantLimit)
			}
			if lines := strings.Count(buf.String(), "\n"); lines != 1 || !strings.Contains(buf.String(), tt.wantLog) {
				t.Errorf("log: got %q (%d lines), want one line with %s", buf.String(), lines, tt.wantLog)
			}
		})
	}
}
