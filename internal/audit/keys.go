package audit

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// KeysDir is the archive's folder of key snapshots.
const KeysDir = "keys"

const (
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
	name := KeysDir + "/" + t.Format(recDay) + "/" + t.Format(recTime) + "-" + hex.EncodeToString(sum[:]) + ".json"
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.writeFile(name, append(b, '\n'))
}

// ArchivedKey is one key of an archived directory (a JWK), as audit
// verify reads it back: Kty "OKP", Crv "Ed25519", X the public key in
// base64url, Kid its RFC 7638 thumbprint, Nbf and Exp seconds since the
// Unix epoch (0: no bound).
type ArchivedKey struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Nbf int64  `json:"nbf"`
	Exp int64  `json:"exp"`
}

// Keys returns the keys of the snapshot's directory, checked as
// parseDirectory checks them; the error says why the directory is not a
// JWKS of Ed25519 keys each named by its thumbprint.
func (s KeySnapshot) Keys() ([]ArchivedKey, error) { return parseDirectory(s.Directory) }

// parseDirectory decodes a JWKS body and checks each key: an OKP Ed25519
// key whose kid is its RFC 7638 thumbprint (RFC 8037 A.3).
func parseDirectory(b []byte) ([]ArchivedKey, error) {
	var d struct {
		Keys []ArchivedKey `json:"keys"`
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

// ReadKeySnapshots reads every key snapshot of the archive in dir (see
// RecordKeys), oldest first. A snapshot that does not parse, whose name
// does not carry its directory's SHA-256, or whose directory is not a
// JWKS of Ed25519 keys each named by its thumbprint, is not returned: its
// error is joined into bad (ErrAltered). None is no error.
func ReadKeySnapshots(dir string) (snaps []KeySnapshot, bad error, err error) {
	var names []string
	root := filepath.Join(dir, KeysDir)
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("key archive: %w", err)
	}
	slices.Sort(names)
	var bads []error
	for _, p := range names {
		s, perr := readSnapshot(p)
		if perr != nil {
			rel, _ := filepath.Rel(dir, p)
			bads = append(bads, fmt.Errorf("%s: %w: %v", filepath.ToSlash(rel), ErrAltered, perr))
			continue
		}
		snaps = append(snaps, s)
	}
	return snaps, errors.Join(bads...), nil
}

// readSnapshot reads and checks one snapshot file.
func readSnapshot(p string) (KeySnapshot, error) {
	var s KeySnapshot
	f, err := os.Open(p)
	if err != nil {
		return s, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSnapshot+1))
	switch {
	case err != nil:
		return s, err
	case len(b) > maxSnapshot:
		return s, fmt.Errorf("larger than %d octets", maxSnapshot)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, err
	}
	sum := sha256.Sum256(s.Directory)
	if want := hex.EncodeToString(sum[:]) + ".json"; !strings.HasSuffix(filepath.Base(p), "-"+want) {
		return s, fmt.Errorf("its directory hashes to %x, not to the SHA-256 its name carries", sum)
	}
	if _, err := parseDirectory(s.Directory); err != nil {
		return s, err
	}
	return s, nil
}
