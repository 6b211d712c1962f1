package signing_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// BenchmarkDirectoryServe measures one directory response signed by two
// keys (the directory of an identity in the middle of a rotation).
func BenchmarkDirectoryServe(b *testing.B) {
	p, err := signing.Publish([]signing.Entry{{Slug: "default",
		Keys: []*signing.Key{newKey(b, true, time.Time{}, time.Time{}), newKey(b, true, time.Time{}, time.Time{})}}})
	if err != nil {
		b.Fatal(err)
	}
	d := signing.NewDirectoryServer(p, signing.DirectoryOptions{})
	req := httptest.NewRequest("GET", "http://bot.example"+signing.DirectoryPath, nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		d.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
