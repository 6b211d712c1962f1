package config_test

import (
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

func TestDefaultDataDir(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		dataDir   string
		want, err string
	}{
		{"XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "", "/x/state/robotsproxy", ""},
		{"HOME", map[string]string{"HOME": "/home/u"}, "", "/home/u/.local/state/robotsproxy", ""},
		{"relative XDG_STATE_HOME is ignored", map[string]string{"XDG_STATE_HOME": "state", "HOME": "/home/u"}, "", "/home/u/.local/state/robotsproxy", ""},
		{"data_dir wins", map[string]string{"XDG_STATE_HOME": "/x/state"}, "/srv/rp", "/srv/rp", ""},
		{"never the working directory", map[string]string{"HOME": "relative"}, "", "", "data_dir"},
		{"nothing set", nil, "", "", "data_dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			c.DataDir = tt.dataDir
			got, err := c.ResolveDataDir(func(k string) string { return tt.env[k] })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %q, %v; want an error naming %s", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
