package access

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
)

// classifyError returns the cause of a failed robots.txt fetch: err is
// what the HTTP client returned for a request to requested, or the error
// reading the body.
func classifyError(err error, requested string) policy.Cause {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	var alert tls.AlertError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case netguard.IsRefused(err):
		return policy.CauseDestination
	case errors.As(err, &dnsErr):
		return policy.CauseDNS
	case errors.As(err, &certErr), errors.As(err, &unknownAuthority), errors.As(err, &hostnameErr),
		errors.As(err, &invalidCert), errors.As(err, &recordErr), errors.As(err, &alert):
		return policy.CauseTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return policy.CauseTimeout
	case strings.Contains(err.Error(), "server response headers exceeded"):
		// net/http's error for MaxResponseHeaderBytes has no type of its own.
		return policy.CauseTooLarge
	case strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		// Handshake failures reported as plain errors ("tls: first record
		// does not look like a TLS handshake", a plain HTTP answer).
		return policy.CauseTLS
	case errors.As(err, &opErr), errors.Is(err, net.ErrClosed):
		return policy.CauseConnect
	case isConnectionClosed(err):
		return policy.CauseConnect
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.URL != requested {
		return policy.CauseRedirects // a hop past the first failed, in no class above
	}
	return policy.CauseOther
}

// isConnectionClosed reports whether err says the origin closed the
// connection before a complete response came.
func isConnectionClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
