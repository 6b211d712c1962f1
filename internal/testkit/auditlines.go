package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// maxLine bounds an audit line the readers here take, in octets: the
// 1 MiB every reader of the product takes (auditlog.MaxLineBytes).
const maxLine = 1 << 20

// AuditSink is a goroutine-safe audit log sink (an io.Writer for the
// proxy's audit lines) that tests read back decoded.
type AuditSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// Delay is how long (ns) each Write takes before its line appears: a
	// slow disk, so that a line written late is seen late.
	Delay atomic.Int64
}

// Write appends p, after Delay.
func (b *AuditSink) Write(p []byte) (int, error) {
	if d := b.Delay.Load(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *AuditSink) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the audit lines written so far, each decoded as a JSON
// object; a line that is not one fails the test.
func (b *AuditSink) Lines(t testing.TB) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	return decodeLines(t, "audit line", b.buf.Bytes())
}

// WaitLines returns the audit lines once there are at least n, or after 5
// seconds with those there are: a line can be written after the client
// saw its answer.
func (b *AuditSink) WaitLines(t testing.TB, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l := b.Lines(t)
		if len(l) >= n || time.Now().After(deadline) {
			return l
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ReadAuditLines reads the audit log file at path, each line decoded as a
// JSON object; a line that is not one fails the test.
func ReadAuditLines(t testing.TB, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeLines(t, path, raw)
}

func decodeLines(t testing.TB, what string, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxLine+1)
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s:%d is not JSON: %q: %v", what, n, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return out
}
