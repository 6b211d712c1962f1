package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// UpstreamTLS returns the TLS configuration of the proxy's connections to
// origins (robots.txt fetches and forwarded requests): nil, the system
// roots, without upstream.ca_file; with it, a pool of the system roots
// (SSL_CERT_FILE, SSL_CERT_DIR) and every PEM CERTIFICATE in the file.
// Verification is never skipped. A file that cannot be read, or holds no
// certificate, is an error naming the key and the file.
func UpstreamTLS(c config.Config) (*tls.Config, error) {
	file := c.Upstream.CAFile
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("upstream.ca_file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool() // no system roots here: the file's alone
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("upstream.ca_file: %s holds no PEM \"CERTIFICATE\" block", file)
	}
	return &tls.Config{RootCAs: pool}, nil
}
