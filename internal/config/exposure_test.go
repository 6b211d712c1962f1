package config_test

import (
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// TestOpenProxyRefused: listening beyond loopback with nobody pinned, or
// an admin listener beyond loopback, is refused unless allow_open_proxy.
func TestOpenProxyRefused(t *testing.T) {
	const user = "identity:\n  users:\n    - name: a\n      password_bcrypt: \"$2a$04$wTTcfBvBbvHMUzHkhDdnWuEbkHY4Fp5TfmFVTK2/bNfxOVJtunBSO\"\n      token: A\n"
	const rng = "identity:\n  client_ranges:\n    - cidr: 10.0.0.0/8\n      token: A\n"
	tests := []struct {
		name, in string
		wantKey  string // "" for accepted
	}{
		{"defaults are loopback", "", ""},
		{"localhost", "listen: localhost:8080\nadmin_listen: localhost:9090\n", ""},
		{"IPv6 loopback", "listen: \"[::1]:8080\"\nadmin_listen: \"[::1]:9090\"\n", ""},
		{"all interfaces, nobody pinned", "listen: 0.0.0.0:8080\n", "listen"},
		{"empty host binds every interface", "listen: \":8080\"\n", "listen"},
		{"a name may resolve anywhere", "listen: proxy.internal:8080\n", "listen"},
		{"IPv6 any", "listen: \"[::]:8080\"\n", "listen"},
		{"all interfaces with users", "listen: 0.0.0.0:8080\n" + user, ""},
		{"all interfaces with client ranges", "listen: 0.0.0.0:8080\n" + rng, ""},
		{"admin beyond loopback", "admin_listen: 0.0.0.0:9090\n", "admin_listen"},
		{"admin beyond loopback, users do not cover /metrics", "listen: 0.0.0.0:8080\nadmin_listen: 0.0.0.0:9090\n" + user, "admin_listen"},
		{"allowed explicitly", "allow_open_proxy: true\nlisten: 0.0.0.0:8080\nadmin_listen: 0.0.0.0:9090\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(strings.NewReader(tt.in))
			switch {
			case tt.wantKey == "" && err != nil:
				t.Errorf("Load(%q): %v; want accepted", tt.in, err)
			case tt.wantKey != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantKey+":") || !strings.Contains(err.Error(), "allow_open_proxy")):
				t.Errorf("Load(%q): got %v; want an error naming %s and allow_open_proxy", tt.in, err, tt.wantKey)
			}
		})
	}
}
