// Package mitm provides HTTPS interception ("man in the middle") for
// robotsproxy with the operator's own certificate authority.
//
// # What interception means
//
// Without interception a CONNECT request opens an opaque TLS tunnel: the
// proxy sees only the host name and port, never the URL path, so it cannot
// apply robots.txt rules to individual HTTPS requests. With interception
// the proxy terminates the client's TLS connection itself, presenting a
// certificate for the requested host that it signs on the fly with a local
// CA, reads the plaintext request, applies policy, and forwards allowed
// requests to the origin over a second, ordinary TLS connection.
//
// Consequences the operator must accept:
//
//   - The proxy sees the plaintext of every intercepted HTTPS exchange,
//     including cookies, credentials and bodies.
//   - Clients must trust the CA certificate (add it to their trust store or
//     pass it as a root); otherwise every intercepted handshake fails.
//   - Anyone holding the CA private key can impersonate any web site to
//     those clients. Keep the key file secret (InitCA writes it with mode
//     0600), never commit it, and never reuse goproxy's built-in CA, whose
//     key is public.
//
// # Use
//
// Create a CA once with InitCA and load it at start-up with LoadCA, or let
// DataDirCA do both in a data directory (created on first use, reused
// after, never overwritten), and hand a Certs (the leaf-certificate cache)
// to goproxy:
//
//	ca, err := mitm.LoadCA("ca.pem", "ca-key.pem")
//	certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
//	action := &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: certs.TLSConfig}
//
// Leaf certificates use ECDSA P-256 keys, are valid from one hour before
// signing for seven days (never past the CA's NotAfter), and are cached per
// host in a bounded LRU cache until one day before they expire.
package mitm
