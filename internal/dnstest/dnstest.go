// Package dnstest runs a DNS server on a local UDP port for tests: it
// answers PTR and A questions from tables, so that forward-confirmed
// reverse DNS can be tested without the network.
package dnstest

import (
	"net"
	"net/netip"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// Zone is what a Server answers. Names are fully qualified, with the
// final dot ("1.66.249.66.in-addr.arpa.", "crawl.googlebot.com.").
type Zone struct {
	// PTR maps reverse names to the host name they point to.
	PTR map[string]string
	// A maps host names to an IPv4 address.
	A map[string]string
	// Fail lists names answered with SERVFAIL.
	Fail map[string]bool
}

// Server serves z on 127.0.0.1 over UDP until the test ends and returns
// its address (host:port). A name in neither table gets NXDOMAIN; a name
// in one table asked for the other type gets an empty answer.
func Server(t testing.TB, z Zone) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out, ok := z.answer(buf[:n]); ok {
				pc.WriteTo(out, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

func (z Zone) answer(q []byte) ([]byte, bool) {
	var m dnsmessage.Message
	if m.Unpack(q) != nil || len(m.Questions) != 1 {
		return nil, false
	}
	qu := m.Questions[0]
	name := qu.Name.String()
	h := dnsmessage.ResourceHeader{Name: qu.Name, Type: qu.Type, Class: qu.Class, TTL: 60}
	m.Header.Response, m.Header.Authoritative = true, true
	switch {
	case z.Fail[name]:
		m.Header.RCode = dnsmessage.RCodeServerFailure
	case qu.Type == dnsmessage.TypePTR && z.PTR[name] != "":
		m.Answers = []dnsmessage.Resource{{Header: h, Body: &dnsmessage.PTRResource{PTR: dnsmessage.MustNewName(z.PTR[name])}}}
	case qu.Type == dnsmessage.TypeA && z.A[name] != "":
		m.Answers = []dnsmessage.Resource{{Header: h, Body: &dnsmessage.AResource{A: netip.MustParseAddr(z.A[name]).As4()}}}
	case z.A[name] != "" || z.PTR[name] != "":
		// the name exists, without records of this type
	default:
		m.Header.RCode = dnsmessage.RCodeNameError
	}
	out, err := m.Pack()
	return out, err == nil
}
