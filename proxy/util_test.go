package proxy_test

import (
	"bufio"
	"io"
	"testing"
)

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }

// lastLine returns the newest audit line.
func lastLine(t *testing.T, h *harness) map[string]any {
	t.Helper()
	lines := h.audit.Lines(t)
	if len(lines) == 0 {
		t.Fatal("no audit line written")
	}
	return lines[len(lines)-1]
}

// assertFields checks audit-line fields.
func assertFields(t *testing.T, line map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if line[k] != v {
			t.Errorf("audit field %s: got %v, want %v (line %v)", k, line[k], v, line)
		}
	}
}

// counter returns the value of the counter name{...=label}, 0 if absent.
func (h *harness) counter(t *testing.T, name, label string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
