package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// The archive keeps the signing keys' public halves too (Web Bot Auth):
//
//	keys/2026-11-26/120635.123456789Z-S.json  the key directory as served at one start or reload
//
// S is the SHA-256, in hex, of the directory (the JWKS body served at
// /.well-known/http-message-signatures-directory). Each file is a
// KeySnapshot. Snapshots are never pruned: they are small, and without
// them no signed line verifies.

const (
	keysDir = "keys"
	// maxSnapshot bounds a key snapshot, in octets, written or read back:
	// a directory of a few hundred keys.
	maxSnapshot = 1 << 20
)

// KeySnapshot is the key directory as one start or reload of the proxy
// published it.
type KeySnapshot struct {
	// SeenAt is when the proxy started or reloaded with these keys: a
	// signature made before it cannot have used them.
	SeenAt time.Time `json:"seen_at"`
	// Event is "start" or "reload".
	Event string `json:"event"`
	// Directory is the JWKS served, verbatim: {"keys":[JWK...]}, each JWK
	// an OKP Ed25519 public key with kid (its RFC 7638 thumbprint) and
	// nbf/exp (seconds since the Unix epoch) when the key has them.
	Directory json.RawMessage `json:"directory"`
}

// RecordKeys archives the key directory (the JWKS body served, see
// KeySnapshot) as the proxy published it at t on event ("start" or
// "reload"). The directory is checked first: it must be a JWKS whose
// keys each have a kid that is the RFC 7638 thumbprint of the key.
func (a *Archive) RecordKeys(directory []byte, t time.Time, event string) error {
	if _, err := parseDirectory(directory); err != nil {
		return fmt.Errorf("key archive: %w", err)
	}
	if len(directory) > maxSnapshot/2 {
		return fmt.Errorf("key archive: a directory of %d octets is larger than %d", len(directory), maxSnapshot/2)
	}
	b, err := json.Marshal(KeySnapshot{SeenAt: t.UTC(), Event: event, Directory: directory})
	if err != nil {
		return fmt.Errorf("key archive: %w", err)
	}
	sum := sha256.Sum256(directory)
	t = t.UTC()
	name := keysDir + "/" + t.Format(recDay) + "/" + t.Format(recTime) + "-" + hex.EncodeToString(sum[:]) + ".json"
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.writeFile(name, append(b, '\n'))
}

// archivedKey is one key of a directory as verify reads it back.
type archivedKey struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Nbf int64  `json:"nbf"`
	Exp int64  `json:"exp"`
}

// parseDirectory decodes a JWKS body and checks each key: an OKP Ed25519
// key whose kid is its RFC 7638 thumbprint (RFC 8037 A.3).
func parseDirectory(b []byte) ([]archivedKey, error) {
	var d struct {
		Keys []archivedKey `json:"keys"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("not a JWKS: %w", err)
	}
	if d.Keys == nil {
		return nil, errors.New(`not a JWKS: no "keys" array`)
	}
	for i, k := range d.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" || k.X == "" {
			return nil, fmt.Errorf("key %d: not an OKP Ed25519 public key (kty %q, crv %q)", i, k.Kty, k.Crv)
		}
		pub, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("key %d: x is not an Ed25519 public key in base64url", i)
		}
		if want := signing.Thumbprint(pub); k.Kid != want {
			return nil, fmt.Errorf("key %d: kid %q is not the key's RFC 7638 thumbprint %s", i, k.Kid, want)
		}
	}
	return d.Keys, nil
}
