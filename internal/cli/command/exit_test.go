package command

import (
	"bytes"
	"errors"
	"testing"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    int
		printed string
	}{
		{"nil", nil, 0, ""},
		{"plain error", errors.New("boom"), 1, "robotsproxy: boom\n"},
		{"usage error", usageErr("bad %s", "flag"), 2, "robotsproxy: bad flag\n"},
		{"wrapped usage error", errors.Join(usageErr("inner")), 2, "robotsproxy: inner\n"},
		{"disallowed", errDisallowed, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var printed bytes.Buffer
			if got := ExitCode(tt.err, &printed); got != tt.want {
				t.Errorf("ExitCode(%v): got %d, want %d", tt.err, got, tt.want)
			}
			if printed.String() != tt.printed {
				t.Errorf("ExitCode(%v): printed %q, want %q", tt.err, printed.String(), tt.printed)
			}
		})
	}
}
