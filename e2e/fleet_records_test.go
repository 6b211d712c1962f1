package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// recordOrigin serves robots.txt with a status and body, counting the
// proxies' fetches, and "origin:PATH" for every other path.
type recordOrigin struct {
	srv *testkit.Site
}

func newRecordOrigin(t *testing.T, status int, robots string) *recordOrigin {
	return &recordOrigin{srv: testkit.NewSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, robots)
	}), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "origin:"+r.URL.Path)
	}))}
}

// authority is the origin's host:port.
func (o *recordOrigin) authority() string {
	u, _ := url.Parse(o.srv.URL)
	return u.Host
}

// recordKey is the store key of the origin's robots.txt record under the
// default key prefix.
func (o *recordOrigin) recordKey() string {
	return "robotsproxy:v2:robots:{http://" + o.authority() + "}"
}

// startRecordFleet starts n replicas sharing the store at redisURL, with
// the record key file keyFile ("" for none).
func startRecordFleet(t *testing.T, redisURL, keyFile string, n int) *fleet {
	t.Helper()
	cfg := fmt.Sprintf("shared:\n  redis_url: %q\n  record_key_file: %q\n", redisURL, keyFile)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fleet{}
	for range n {
		p := startServe(t, "", "-config", path)
		proxyURL, _ := url.Parse("http://" + p.proxyAddr)
		f.procs = append(f.procs, p)
		f.clients = append(f.clients, &http.Client{Timeout: time.Minute,
			Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}})
	}
	return f
}

// forgedRecord returns a record in the store's format for the robots.txt
// URL u, with the fields of template (a genuine record: its parse limit)
// and the given result and body, as another application that can write
// to the store would write it: fully formed, without a MAC.
func forgedRecord(t *testing.T, template []byte, u, result, body string) []byte {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal(template, &rec); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	rec["url"], rec["final_url"], rec["access_result"] = u, u, result
	rec["fetched_at"], rec["ttl_ms"], rec["max_age_ms"] = time.Now().UTC().Format(time.RFC3339Nano), 3600000, -1
	delete(rec, "mac")
	delete(rec, "error")
	if result == "successful" {
		rec["status"], rec["sha256"], rec["size"] = 200, hex.EncodeToString(sum[:]), len(body)
	} else {
		rec["status"], rec["size"] = 404, 0
		delete(rec, "sha256")
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestFleetRefusesForeignRecords writes records into the fleet's Redis
// under the key of a site whose robots.txt disallows /private: another
// site's genuine 404 record (a key swap), a forged "unavailable" record,
// and a fully formed allow-all record. The replicas refuse each (they
// fetch robots.txt again and /private stays 403), except the forged
// allow-all record without a record key: the documented limit of an
// unauthenticated store.
func TestFleetRefusesForeignRecords(t *testing.T) {
	rs := startRedisServer(t)
	opts, err := redis.ParseURL(rs.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	keyFile := filepath.Join(t.TempDir(), "record.key")
	if err := os.WriteFile(keyFile, []byte("c2VjcmV0LXJlY29yZC1rZXktb2YtdGhlLWZsZWV0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := startRecordFleet(t, rs.URL(), "", 2)
	keyed := startRecordFleet(t, rs.URL(), keyFile, 1)
	const disallow = "User-agent: *\nDisallow: /private\n"
	const allowAll = "User-agent: *\nAllow: /\n"

	// A genuine 404 record of another site, written by replica 0.
	other := newRecordOrigin(t, http.StatusNotFound, "")
	if status, err := plain.get(0, other.srv.URL+"/x"); status != http.StatusOK {
		t.Fatalf("GET %s/x: %d %v, want 200 (no robots.txt)", other.srv.URL, status, err)
	}
	genuine, err := rdb.Get(ctx, other.recordKey()).Bytes()
	if err != nil {
		t.Fatalf("the other site's record: %v", err)
	}

	tests := []struct {
		name   string
		f      *fleet
		plant  func(t *testing.T, o *recordOrigin)
		want   int    // the status of /private
		reason string // the refusal counted, "" for none
	}{
		{"another site's 404 record", plain, func(t *testing.T, o *recordOrigin) {
			rdb.Set(ctx, o.recordKey(), genuine, time.Hour)
		}, http.StatusForbidden, "url"},
		{"forged unavailable", plain, func(t *testing.T, o *recordOrigin) {
			rdb.Set(ctx, o.recordKey(), `{"access_result":"unavailable","parse_limit":524288,"ttl_ms":3600000,"max_age_ms":-1}`, time.Hour)
		}, http.StatusForbidden, "url"},
		{"forged allow-all, without a record key", plain, func(t *testing.T, o *recordOrigin) {
			sum := sha256.Sum256([]byte(allowAll))
			rdb.Set(ctx, "robotsproxy:v2:body:"+hex.EncodeToString(sum[:]), allowAll, time.Hour)
			rdb.Set(ctx, o.recordKey(), forgedRecord(t, genuine, "http://"+o.authority()+"/robots.txt", "successful", allowAll), time.Hour)
		}, http.StatusOK, ""},
		{"another site's 404 record, with a record key", keyed, func(t *testing.T, o *recordOrigin) {
			rdb.Set(ctx, o.recordKey(), genuine, time.Hour)
		}, http.StatusForbidden, "url"},
		{"forged unavailable naming the URL, with a record key", keyed, func(t *testing.T, o *recordOrigin) {
			rdb.Set(ctx, o.recordKey(), forgedRecord(t, genuine, "http://"+o.authority()+"/robots.txt", "unavailable", ""), time.Hour)
		}, http.StatusForbidden, "mac"},
		{"forged allow-all, with a record key", keyed, func(t *testing.T, o *recordOrigin) {
			sum := sha256.Sum256([]byte(allowAll))
			rdb.Set(ctx, "robotsproxy:v2:body:"+hex.EncodeToString(sum[:]), allowAll, time.Hour)
			rdb.Set(ctx, o.recordKey(), forgedRecord(t, genuine, "http://"+o.authority()+"/robots.txt", "successful", allowAll), time.Hour)
		}, http.StatusForbidden, "mac"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := newRecordOrigin(t, http.StatusOK, disallow)
			tc.plant(t, o)
			last := len(tc.f.procs) - 1 // a replica that never saw the site
			refusedBefore := tc.f.sumPrefix(t, "robotsproxy_shared_records_refused_total")
			status, err := tc.f.get(last, o.srv.URL+"/private/page")
			if status != tc.want {
				t.Fatalf("/private/page through replica %d: got %d (%v), want %d; stderr:\n%s", last, status, err, tc.want, tc.f.procs[last].stderr)
			}
			refused := tc.f.sumPrefix(t, "robotsproxy_shared_records_refused_total{reason=\""+tc.reason+"\"}")
			if tc.reason == "" {
				if n := tc.f.sumPrefix(t, "robotsproxy_shared_records_refused_total") - refusedBefore; n != 0 || o.srv.RobotsHits() != 0 {
					t.Errorf("refusals %v, robots.txt fetches %d: want 0, 0 (the record is used)", n, o.srv.RobotsHits())
				}
				return
			}
			if n := o.srv.RobotsHits(); n != 1 {
				t.Errorf("robots.txt fetches: got %d, want 1 (the planted record is a miss)", n)
			}
			if refused < 1 {
				t.Errorf("robotsproxy_shared_records_refused_total{reason=%q}: got %v, want at least 1", tc.reason, refused)
			}
			// The refetched record replaced the planted one: the fleet's
			// other replica uses it without fetching.
			if status, _ := tc.f.get(0, o.srv.URL+"/private/other"); status != http.StatusForbidden || o.srv.RobotsHits() != 1 {
				t.Errorf("replica 0 after the refetch: /private/other %d, robots.txt fetches %d; want 403, 1", status, o.srv.RobotsHits())
			}
		})
	}
	for i, p := range append(plain.procs, keyed.procs...) {
		if strings.Contains(p.stderr.String(), "c2VjcmV0") {
			t.Errorf("replica %d logged the record key", i)
		}
	}
	if !strings.Contains(plain.procs[1].stderr.String(), "shared robots.txt record refused") {
		t.Errorf("replica 1 logged no refusal warning:\n%s", plain.procs[1].stderr)
	}
}
