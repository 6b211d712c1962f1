package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

func TestLoadSharedErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"scheme", "shared:\n  redis_url: \"http://127.0.0.1:6379\"\n", []string{"shared.redis_url", "scheme"}},
		{"unknown option", "shared:\n  redis_url: \"redis://127.0.0.1:6379?pool=3\"\n", []string{"shared.redis_url", "pool"}},
		{"password not shown", "shared:\n  redis_url: \"redis://u:hunter2@127.0.0.1:6379/db\"\n", []string{"shared.redis_url", "xxxxx"}},
		{"lock_ttl under robots.timeout", "shared:\n  redis_url: \"redis://127.0.0.1:6379\"\n  lock_ttl: 10s\n", []string{"shared.lock_ttl", "robots.timeout"}},
		{"lock_ttl zero", "shared:\n  lock_ttl: 0s\n", []string{"shared.lock_ttl"}},
		{"pool_size zero", "shared:\n  pool_size: 0\n", []string{"shared.pool_size"}},
		{"pool_size too large", "shared:\n  pool_size: 10001\n", []string{"shared.pool_size", "10000"}},
		{"timeout zero", "shared:\n  timeout: 0s\n", []string{"shared.timeout"}},
		{"empty key_prefix", "shared:\n  key_prefix: \"\"\n", []string{"shared.key_prefix"}},
		{"key_prefix with a space", "shared:\n  key_prefix: \"my proxy:\"\n", []string{"shared.key_prefix"}},
		{"unknown key", "shared:\n  redis: \"redis://127.0.0.1\"\n", []string{"shared.redis"}},
		{"record_key_file with a line end", "shared:\n  record_key_file: \"/etc/key\\n\"\n", []string{"shared.record_key_file"}},
		{"record_key_file with spaces around", "shared:\n  record_key_file: \" /etc/key\"\n", []string{"shared.record_key_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Load(%q): got %+v and no error, want an error naming %q", tt.in, cfg.Shared, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%q): got error %q, want it to contain %q", tt.in, err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Load(%q): the error shows the password: %q", tt.in, err)
			}
		})
	}
}

func TestLoadShared(t *testing.T) {
	in := "robots:\n  timeout: 5s\nshared:\n  redis_url: \"rediss://u:p@cache.example:6380/1\"\n  key_prefix: \"crawl-a:\"\n  lock_ttl: 6s\n  timeout: 200ms\n  record_key_file: \"/run/secrets/record-key\"\n  pool_size: 32\n"
	cfg, err := config.Load(strings.NewReader(in))
	if err != nil {
		t.Fatalf("Load(%q): %v", in, err)
	}
	want := config.Shared{RedisURL: "rediss://u:p@cache.example:6380/1", KeyPrefix: "crawl-a:", LockTTL: 6 * time.Second, Timeout: 200 * time.Millisecond,
		RecordKeyFile: "/run/secrets/record-key", PoolSize: 32}
	if cfg.Shared != want {
		t.Errorf("Load(%q): got %+v, want %+v", in, cfg.Shared, want)
	}
}
