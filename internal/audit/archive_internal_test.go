package audit

import (
	"fmt"
	"testing"

	"github.com/rs/zerolog"
)

// BenchmarkPrune prunes 20,000 of 20,001 indexed records in one call (an
// archive reopened with a smaller archive_max_mb): the index drops them
// at once, not one at a time from its front.
func BenchmarkPrune(b *testing.B) {
	const n = 20_000
	dir := b.TempDir()
	for range b.N {
		b.StopTimer()
		a := &Archive{opts: ArchiveOptions{Dir: dir, MaxBytes: 100, Log: zerolog.Nop()}, bodies: map[string]int64{}, refs: map[string]int{}}
		for i := range n + 1 {
			a.records = append(a.records, archived{name: fmt.Sprintf("records/2026-11-22/%09d-0123456789abcdef-none.json", i), size: 100, sha: noBody})
			a.total += 100
		}
		b.StartTimer()
		a.prune()
		if len(a.records) != 1 || a.total != 100 {
			b.Fatalf("prune: got %d records, %d octets, want 1, 100", len(a.records), a.total)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
