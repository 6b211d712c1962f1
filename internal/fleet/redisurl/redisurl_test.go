package redisurl

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

func TestNewClientURLForms(t *testing.T) {
	tests := []struct {
		url     string
		want    string // the client type, "" for an error
		wantErr string // a part of the error
	}{
		{"redis://127.0.0.1:6379", "*redis.Client", ""},
		{"redis://user:secret@127.0.0.1:6379/2?dial_timeout=1s&pool_size=4", "*redis.Client", ""},
		{"rediss://cache.example:6380", "*redis.Client", ""},
		{"unix:///run/redis.sock", "*redis.Client", ""},
		{"redis://sentinel.example:26379?master_name=mymaster&addr=sentinel2.example:26379", "*redis.Client", ""},
		{"redis+cluster://node1.example:6379?addr=node2.example:6379", "*redis.ClusterClient", ""},
		{"rediss+cluster://node1.example:6379", "*redis.ClusterClient", ""},
		{"http://127.0.0.1:6379", "", "invalid URL scheme"},
		{"redis://127.0.0.1:6379?no_such_option=1", "", "no_such_option"},
		{"redis://127.0.0.1:6379/x", "", "invalid database"},
		{"redis://user:secret@[::1:6379", "", "missing ']' in host"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			c, err := NewClient(tc.url, 0)
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewClient(%q): got error %v, want one containing %q", tc.url, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("NewClient(%q): the error shows the password: %v", tc.url, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewClient(%q): %v", tc.url, err)
			}
			defer c.Close()
			if got := typeName(c); got != tc.want {
				t.Errorf("NewClient(%q): got %s, want %s", tc.url, got, tc.want)
			}
		})
	}
}

func TestNewClientFailsFast(t *testing.T) {
	c, err := NewClient("redis://127.0.0.1:6379", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.(*redis.Client).Options()
	if o.MaxRetries != 0 || o.DialerRetries != 1 || !o.ContextTimeoutEnabled {
		t.Errorf("options: MaxRetries %d, DialerRetries %d, ContextTimeoutEnabled %v; want 0 (none), 1, true",
			o.MaxRetries, o.DialerRetries, o.ContextTimeoutEnabled)
	}
	c2, err := NewClient("redis://127.0.0.1:6379?max_retries=2", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got := c2.(*redis.Client).Options().MaxRetries; got != 2 {
		t.Errorf("max_retries=2: got MaxRetries %d, want 2", got)
	}
}

func typeName(c redis.UniversalClient) string {
	switch c.(type) {
	case *redis.Client:
		return "*redis.Client"
	case *redis.ClusterClient:
		return "*redis.ClusterClient"
	}
	return "other"
}

// TestNewClientPoolSize: the pool's size does not follow GOMAXPROCS
// (go-redis's default, 10 connections in a one-CPU container); the URL's
// pool_size wins over the configured one.
func TestNewClientPoolSize(t *testing.T) {
	tests := []struct {
		url      string
		poolSize int
		want     int
	}{
		{"redis://127.0.0.1:6379", rules.DefaultStorePoolSize, rules.DefaultStorePoolSize},
		{"redis://127.0.0.1:6379", 7, 7},
		{"redis://127.0.0.1:6379?pool_size=4", rules.DefaultStorePoolSize, 4},
		{"redis://sentinel.example:26379?master_name=m", 9, 9},
		{"redis+cluster://node1.example:6379", 11, 11},
		{"redis+cluster://node1.example:6379?pool_size=3", 11, 3},
	}
	for _, tc := range tests {
		c, err := NewClient(tc.url, tc.poolSize)
		if err != nil {
			t.Fatalf("NewClient(%q, %d): %v", tc.url, tc.poolSize, err)
		}
		var got int
		switch c := c.(type) {
		case *redis.Client:
			got = c.Options().PoolSize
		case *redis.ClusterClient:
			got = c.Options().PoolSize
		}
		c.Close()
		if got != tc.want {
			t.Errorf("NewClient(%q, %d): pool size %d, want %d", tc.url, tc.poolSize, got, tc.want)
		}
	}
}
