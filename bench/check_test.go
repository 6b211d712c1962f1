package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/check"
	"github.com/temoto/robotstxt"
)

// checkPaths is how many distinct URLs BenchmarkCheck feeds each
// workload's stdin, in a cycle: a crawler's list of pages of one site.
const checkPaths = 4096

// checkOrigin is the scheme and authority of BenchmarkCheck's URLs.
const checkOrigin = "https://www.example.org"

// checkStdin returns n lines of URLs of w, cycling through checkPaths
// of them: checkOrigin and a path derived from the file's rules, as a
// client sends it (robots.NormalizePath).
func checkStdin(w workload, n int) []byte {
	paths := normalized(derivePaths(w.body, checkPaths))
	var b bytes.Buffer
	for i := range n {
		b.WriteString(checkOrigin)
		b.WriteString(paths[i%len(paths)])
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkCheck measures "robotsproxy check ROBOTS_FILE Googlebot -" over
// URLs read from stdin, one op per URL: check.Run (the command's whole
// work: reading and parsing the file, identifying the crawler, then for
// each line validating the URL, deciding every reading of its path as the
// proxy does, and writing the decision with its group and rule), against
// the same loop with temoto (reading and parsing the file, finding the
// group, then for each line url.Parse with the same checks, Test, and a
// line ALLOWED or DISALLOWED with the URL). Both write to io.Discard.
// Setting up the op's stdin is outside the timer; the file is read and
// parsed inside it, once per b.N URLs, as the command does.
//
//	cd bench && go test -run '^$' -bench Check -count 10 . | tee check.txt && benchstat -col /lib check.txt
func BenchmarkCheck(b *testing.B) {
	for _, w := range workloads(b) {
		file := filepath.Join(b.TempDir(), "robots.txt")
		if err := os.WriteFile(file, w.body, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run("file="+w.name, func(b *testing.B) {
			b.Run("lib=robotsproxy", func(b *testing.B) {
				stdin := checkStdin(w, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				if _, err := check.Run(file, agent, []string{"-"}, check.Options{Stdin: bytes.NewReader(stdin), Stdout: io.Discard}); err != nil {
					b.Fatal(err)
				}
			})
			b.Run("lib=temoto", func(b *testing.B) {
				stdin := checkStdin(w, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				if err := temotoCheck(file, agent, bytes.NewReader(stdin), io.Discard); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// temotoCheck is check's loop with temoto: each line of stdin, less
// its surrounding ASCII white space, is an http or https URL with a host
// (url.Parse, as check.ValidURL), decided for agent on its request URI.
func temotoCheck(file, agent string, stdin io.Reader, stdout io.Writer) error {
	body, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		return err
	}
	return temotoStream(data.FindGroup(agent), stdin, stdout)
}

// temotoStream is temotoCheck's loop over the lines of stdin, the
// counterpart of check's stream.
func temotoStream(g *robotstxt.Group, stdin io.Reader, stdout io.Writer) error {
	out := bufio.NewWriter(stdout)
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.Trim(sc.Text(), " \t\r\n\v\f")
		if line == "" {
			continue
		}
		u, err := url.Parse(line)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return fmt.Errorf("stdin line %d: %q is not an http(s) URL with a host (%v)", n, line, err)
		}
		word := "DISALLOWED "
		if g.Test(u.RequestURI()) {
			word = "ALLOWED "
		}
		out.WriteString(word)
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return out.Flush()
}

// agreementURLs is how many URLs of each workload TestCheckAgreement
// decides with both libraries.
const agreementURLs = 256

// TestCheckAgreement runs check and temotoCheck over the first
// agreementURLs URLs of each workload and logs how many decisions differ
// (temoto is not RFC 9309-exact, and reads the whole of a long file);
// it fails only when either cannot decide them all.
func TestCheckAgreement(t *testing.T) {
	for _, w := range workloads(t) {
		file := filepath.Join(t.TempDir(), "robots.txt")
		if err := os.WriteFile(file, w.body, 0o600); err != nil {
			t.Fatal(err)
		}
		stdin := checkStdin(w, agreementURLs)
		var ours, theirs bytes.Buffer
		if _, err := check.Run(file, agent, []string{"-"}, check.Options{Stdin: bytes.NewReader(stdin), Stdout: &ours}); err != nil {
			t.Fatalf("file=%s: check: %v", w.name, err)
		}
		if err := temotoCheck(file, agent, bytes.NewReader(stdin), &theirs); err != nil {
			t.Fatalf("file=%s: temoto: %v", w.name, err)
		}
		a, b := strings.Split(ours.String(), "\n"), strings.Split(theirs.String(), "\n")
		if len(a) != len(b) {
			t.Fatalf("file=%s: check wrote %d lines, temoto %d", w.name, len(a), len(b))
		}
		differ, disallowed := 0, 0
		for i := range a {
			if strings.HasPrefix(a[i], "DISALLOWED") {
				disallowed++
			}
			if strings.HasPrefix(a[i], "ALLOWED") != strings.HasPrefix(b[i], "ALLOWED") {
				differ++
			}
		}
		t.Logf("file=%-17s %d URLs: %d disallowed by check, %d decided otherwise by temoto", w.name, agreementURLs, disallowed, differ)
	}
}
