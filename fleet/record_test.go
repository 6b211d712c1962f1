package fleet

import (
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/access"
	"github.com/robotsproxy/robotsproxy/robots"
)

// FuzzDecodeRecord feeds arbitrary record and body octets, as a damaged
// or hostile store could hold them: decoding never panics, and a result
// that decodes is successful only with a body that hashes to its record.
func FuzzDecodeRecord(f *testing.F) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	a := access.Access{Result: access.Successful, URL: "http://a.example/robots.txt", FinalURL: "http://a.example/robots.txt",
		Status: 200, MaxAge: -1, FetchedAt: time.Unix(1.7e9, 0), Raw: body, SHA256: sha256.Sum256(body)}
	good, _ := json.Marshal(newRecord(a, robots.Options{}.Limit(), time.Minute))
	f.Add(good, body)
	f.Add(good, []byte("User-agent: *\nAllow: /\n"))
	f.Add([]byte(`{"result":"unavailable","parse_limit":524288,"ttl_ms":1}`), []byte(nil))
	f.Add([]byte(`{"result":"successful","sha256":"zz","size":-1,"parse_limit":524288}`), []byte("x"))
	f.Add([]byte(`{"result":"unreachable","error":"x","header":{"Content-Type":["text/plain; charset=koi8-r"]},"parse_limit":524288}`), []byte{0xff})
	limit := robots.Options{}.Limit()
	f.Fuzz(func(t *testing.T, raw, body []byte) {
		r, err := decodeRecord(raw, limit)
		if err != nil {
			return
		}
		got, err := r.access(body, time.Minute, robots.Options{})
		if err != nil {
			return
		}
		if got.Result == access.Successful && (got.Robots == nil || sha256.Sum256(body) != got.SHA256) {
			t.Fatalf("successful result without a matching body: %q", raw)
		}
		if got.Result != access.Successful && got.Robots != nil {
			t.Fatalf("%s result with rules: %q", got.Result, raw)
		}
	})
}
