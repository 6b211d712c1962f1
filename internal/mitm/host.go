package mitm

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ErrInvalidHost is wrapped by errors for hosts that cannot get a
// certificate: empty, not a DNS name, or an unusable IP literal.
var ErrInvalidHost = errors.New("invalid host")

// maxDNSNameLen is the longest DNS name in presentation form (RFC 1035).
const maxDNSNameLen = 253

// target is a normalised host: the cache key and what goes into the SAN.
type target struct {
	key string     // lower-case DNS name, or canonical IP text
	ip  netip.Addr // valid when the host is an IP literal
}

// parseTarget accepts "host", "host:port", "[v6]", "[v6]:port" or a bare
// IPv6 literal, strips the port and a trailing dot, lower-cases the name
// and validates it.
func parseTarget(host string) (target, error) {
	h, err := stripPort(host)
	if err != nil {
		return target{}, err
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if ip.Zone() != "" {
			return target{}, fmt.Errorf("%w %q: IPv6 zone %q cannot appear in a certificate", ErrInvalidHost, host, ip.Zone())
		}
		ip = ip.Unmap()
		return target{key: ip.String(), ip: ip}, nil
	}
	name := strings.ToLower(strings.TrimSuffix(h, "."))
	if err := checkDNSName(name); err != nil {
		return target{}, fmt.Errorf("%w %q: %v", ErrInvalidHost, host, err)
	}
	return target{key: name}, nil
}

// stripPort removes an optional ":port" and the brackets of an IPv6 literal.
func stripPort(host string) (string, error) {
	h := host
	bracketed := strings.HasPrefix(h, "[")
	if bracketed || strings.Count(h, ":") == 1 {
		var port string
		var err error
		if bracketed && strings.HasSuffix(h, "]") {
			h = h[1 : len(h)-1]
		} else if h, port, err = net.SplitHostPort(h); err != nil {
			return "", fmt.Errorf("%w %q: %v", ErrInvalidHost, host, err)
		}
		if !validPort(port) {
			return "", fmt.Errorf("%w %q: bad port %q", ErrInvalidHost, host, port)
		}
	}
	if h == "" {
		return "", fmt.Errorf("%w %q: empty host name", ErrInvalidHost, host)
	}
	if bracketed && !strings.Contains(h, ":") {
		return "", fmt.Errorf("%w %q: brackets around a non-IPv6 host", ErrInvalidHost, host)
	}
	return h, nil
}

// validPort reports whether p is empty or a decimal number 0-65535.
func validPort(p string) bool {
	if len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

// checkDNSName validates a lower-case name without trailing dot: at most
// 253 bytes of dot-separated labels of 1-63 letters, digits, '-' or '_',
// not starting or ending with '-', and a last label that is not all digits
// (that would be a malformed IPv4 address).
func checkDNSName(name string) error {
	if len(name) > maxDNSNameLen {
		return fmt.Errorf("name is longer than %d bytes", maxDNSNameLen)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return err
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return errors.New("neither a DNS name nor an IP address (numeric last label)")
	}
	return nil
}

func checkLabel(l string) error {
	if l == "" {
		return errors.New("empty label")
	}
	if len(l) > 63 {
		return fmt.Errorf("label %q is longer than 63 bytes", l)
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("label %q starts or ends with '-'", l)
	}
	for _, c := range []byte(l) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		if !ok {
			return fmt.Errorf("label %q contains %q (only letters, digits, '-' and '_'; use punycode for IDNs)", l, c)
		}
	}
	return nil
}
