package policy_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/policy"
)

// ipSpellings returns ways of writing the IPv6 address a in a URL's host:
// every group in full with leading zeros and upper case, each run of zero
// groups compressed to "::", and for an IPv4-mapped address the dotted
// forms. Each is a valid spelling of the same address (RFC 4291 2.2).
func ipSpellings(a netip.Addr, upper bool) []string {
	b := a.As16()
	var groups [8]uint16
	for i := range groups {
		groups[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	hex := func(g uint16, pad bool) string {
		f := "%x"
		if pad {
			f = "%04x"
		}
		s := fmt.Sprintf(f, g)
		if upper {
			s = strings.ToUpper(s)
		}
		return s
	}
	join := func(gs []uint16, pad bool) string {
		parts := make([]string, len(gs))
		for i, g := range gs {
			parts[i] = hex(g, pad)
		}
		return strings.Join(parts, ":")
	}
	out := []string{join(groups[:], true), join(groups[:], false)}
	for i := 0; i < 8; i++ { // compress each zero run [i, j)
		for j := i + 1; j <= 8; j++ {
			if groups[j-1] != 0 {
				break
			}
			out = append(out, join(groups[:i], false)+"::"+join(groups[j:], true))
		}
	}
	if a.Is4In6() {
		v4 := a.Unmap().String()
		out = append(out, v4, "::ffff:"+v4, "0:0:0:0:0:"+hex(0xffff, true)+":"+v4, "0::ffff:"+v4)
	}
	return out
}

// FuzzAuthorityIPSpellings: every spelling of one IP address gives one
// authority, so one robots.txt fetch, cache entry and politeness turn.
func FuzzAuthorityIPSpellings(f *testing.F) {
	f.Add(netip.IPv6Loopback().AsSlice(), false, uint16(80))
	f.Add(netip.MustParseAddr("::ffff:127.0.0.1").AsSlice(), true, uint16(8080))
	f.Add(netip.MustParseAddr("2001:db8::1:0:0:1").AsSlice(), true, uint16(443))
	f.Add(netip.MustParseAddr("::").AsSlice(), false, uint16(1))
	f.Fuzz(func(t *testing.T, raw []byte, upper bool, port uint16) {
		if len(raw) != 16 || port == 0 {
			return
		}
		a := netip.AddrFrom16([16]byte(raw))
		p := fmt.Sprint(port)
		_, want, err := policy.Authority("http", netip.AddrPortFrom(a.Unmap(), port).String())
		if err != nil {
			t.Fatalf("Authority of %s: %v", a, err)
		}
		for _, s := range ipSpellings(a, upper) {
			host := "[" + s + "]:" + p
			if !strings.Contains(s, ":") {
				host = s + ":" + p
			}
			if _, got, err := policy.Authority("http", host); err != nil || got != want {
				t.Errorf("Authority(http, %q): got %q, %v; want %q", host, got, err, want)
			}
		}
	})
}
