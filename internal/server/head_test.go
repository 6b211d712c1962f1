package server

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseHead(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want requestHead
	}{
		{"complete", "GET http://a.example/x HTTP/1.1\r\nHost: a\r\nUser-Agent: Bot/1 (+x)\r\n\r\n",
			requestHead{method: "GET", target: "http://a.example/x", userAgent: "Bot/1 (+x)", protocol: "HTTP/1.1"}},
		{"empty lines first", "\r\n\r\nPOST /p HTTP/1.1\r\nuser-agent:\tB \r\n", requestHead{method: "POST", target: "/p", userAgent: "B", protocol: "HTTP/1.1"}},
		{"bare LF", "GET / HTTP/1.0\nUser-Agent: C\n\n", requestHead{method: "GET", target: "/", userAgent: "C", protocol: "HTTP/1.0"}},
		{"request line cut", "GET http://a.example/long", requestHead{method: "GET", target: "http://a.example/long", targetCut: true}},
		{"method cut", "GE", requestHead{}},
		{"no version", "GET /x\r\n", requestHead{method: "GET", target: "/x"}},
		{"User-Agent line cut", "GET / HTTP/1.1\r\nUser-Agent: Mozi", requestHead{method: "GET", target: "/", protocol: "HTTP/1.1"}},
		{"User-Agent after the headers", "GET / HTTP/1.1\r\n\r\nUser-Agent: body\r\n", requestHead{method: "GET", target: "/", protocol: "HTTP/1.1"}},
		{"version cut", "GET / HTTP/1.", requestHead{method: "GET", target: "/"}},
		{"another version", "PRI * HTTP/2.0\r\n\r\n", requestHead{method: "PRI", target: "*"}},
		{"a version past HTTP/1.1", "GET / HTTP/1.1x\r\n", requestHead{method: "GET", target: "/"}},
		{"method not a token", "G(T / HTTP/1.1\r\n", requestHead{}},
		{"TLS handshake", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", requestHead{}},
		{"empty", "", requestHead{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := parseHead([]byte(c.in)); got != c.want {
				t.Errorf("parseHead(%q) = %+v, want %+v", c.in, got, c.want)
			}
		})
	}
}

func TestHeaderEnd(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", 27},
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody", 27},
		{"GET / HTTP/1.1\nHost: a\n\n", 24},
		{"GET / HTTP/1.1\r\nHost: a\r\n", -1},
		{"\r\n\r\nGET / HTTP/1.1\r\n", -1},
		{"", -1},
	}
	for _, c := range cases {
		if got := headerEnd([]byte(c.in)); got != c.want {
			t.Errorf("headerEnd(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// FuzzParseHead: any octets parse without panic into a method that is a
// token followed by a space in the input, and values found in the input.
func FuzzParseHead(f *testing.F) {
	f.Add([]byte("GET http://a.example/ HTTP/1.1\r\nUser-Agent: x\r\n\r\n"))
	f.Add([]byte("\r\nCONNECT a:443 HTTP/1.1\nuser-agent: y\n"))
	f.Add([]byte("GET /" + strings.Repeat("a", 100)))
	f.Fuzz(func(t *testing.T, b []byte) {
		h := parseHead(b)
		if h.method != "" && (!isToken([]byte(h.method)) || !bytes.Contains(b, []byte(h.method+" "))) {
			t.Errorf("parseHead(%q): method %q is not a token followed by a space", b, h.method)
		}
		if h.method == "" && (h.target != "" || h.userAgent != "") {
			t.Errorf("parseHead(%q) = %+v: a target or User-Agent without a method", b, h)
		}
		if !bytes.Contains(b, []byte(h.target)) || !bytes.Contains(b, []byte(h.userAgent)) {
			t.Errorf("parseHead(%q) = %+v: values not in the input", b, h)
		}
		if e := headerEnd(b); e > len(b) {
			t.Errorf("headerEnd(%q) = %d, past the end", b, e)
		}
	})
}
