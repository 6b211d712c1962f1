package loggen

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

func TestWriteIsDeterministicJSONWithChain(t *testing.T) {
	var a, b bytes.Buffer
	c := Config{Lines: 2000, Hosts: 50, Chain: true}
	if err := Write(&a, c); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs with one Config differ")
	}
	prev := strings.Repeat("0", 64)
	sc := bufio.NewScanner(&a)
	var ls auditlog.Scanner
	n, reportOnly := 0, 0
	for sc.Scan() {
		// Read as audit verify and audit report read it.
		var linePrev string
		enforced := true
		ls.Reset(sc.Bytes())
		for ls.Next() {
			var err error
			switch string(ls.Key()) {
			case "prev":
				var v []byte
				v, err = ls.Str()
				linePrev = string(v)
			case auditlog.FieldEnforced:
				enforced, err = ls.Bool()
			}
			if err != nil {
				t.Fatalf("line %d: %v", n+1, err)
			}
		}
		if err := ls.Err(); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		if linePrev != prev {
			t.Fatalf("line %d: prev %s, want %s", n+1, linePrev, prev)
		}
		sum := sha256.Sum256(append(sc.Bytes(), '\n'))
		prev = hex.EncodeToString(sum[:])
		if !enforced {
			reportOnly++
		}
		n++
	}
	if n != c.Lines || reportOnly == 0 {
		t.Errorf("got %d lines, %d report-only; want %d lines, some report-only", n, reportOnly, c.Lines)
	}
}

func TestWriteRotated(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteRotated(dir, Config{Lines: 1000, Hosts: 20}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 || !strings.HasSuffix(paths[0], ".log.gz") || filepath.Base(paths[2]) != "audit.log" {
		t.Fatalf("got %v, want a gzipped oldest backup, a backup, audit.log", paths)
	}
	total := 0
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		if i == 0 {
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			sc = bufio.NewScanner(zr)
		}
		for sc.Scan() {
			total++
		}
		f.Close()
	}
	if total != 1000 {
		t.Errorf("got %d lines in all, want 1000", total)
	}
}

func TestWriteUniqueKeys(t *testing.T) {
	var b bytes.Buffer
	const lines, keyBytes = 50, 300
	if err := WriteUnique(&b, UniqueConfig{Lines: lines, KeyBytes: keyBytes}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		for _, f := range []string{"url", "user_agent", "product_token", "rule"} {
			k, _ := l[f].(string)
			if len(k) < keyBytes || seen[k] {
				t.Fatalf("line %d: %s %.30q of %d octets (seen before: %v), want new and at least %d", n+1, f, k, len(k), seen[k], keyBytes)
			}
			seen[k] = true
		}
		if l["decision"] != "deny" || l["enforced"] != false {
			t.Fatalf("line %d: got decision %v, enforced %v; want a report-mode denial", n+1, l["decision"], l["enforced"])
		}
		n++
	}
	if n != lines {
		t.Errorf("got %d lines, want %d", n, lines)
	}
}
