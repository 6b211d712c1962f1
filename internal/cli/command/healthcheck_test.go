package command

import (
	"testing"
)

func TestProbeURL(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"127.0.0.1:9090", "http://127.0.0.1:9090/readyz"},
		{"0.0.0.0:9090", "http://127.0.0.1:9090/readyz"},
		{":9090", "http://127.0.0.1:9090/readyz"},
		{"[::]:9090", "http://[::1]:9090/readyz"},
		{"admin.local:9090", "http://admin.local:9090/readyz"},
	} {
		if got, err := probeURL(tt.addr, "/readyz"); err != nil || got != tt.want {
			t.Errorf("probeURL(%q): got %q, %v; want %q", tt.addr, got, err, tt.want)
		}
	}
}
