package command

import (
	"testing"
	"time"
)

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"2026-11-22T10:00:00Z", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)},
		{"2026-11-21", time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
		{"24h", time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)},
	} {
		got, err := parseWhen(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseWhen(%q): got %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
