package signing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/keyfile"
)

// ValidityFile, in a key directory, bounds the key's validity: a JSON
// object {"nbf": SECONDS, "exp": SECONDS} (Unix seconds; either may be
// left out), published as the JWK's nbf and exp in the key directory. A
// key directory without it holds a key valid at all times. "robotsproxy
// keys init -valid DURATION" writes it; an operator retires a key by
// lowering its exp.
const ValidityFile = "validity.json"

// validity is ValidityFile's content.
type validity struct {
	NotBefore int64 `json:"nbf,omitempty"`
	NotAfter  int64 `json:"exp,omitempty"`
}

// WriteValidity writes ValidityFile into dir: the key is valid from nbf
// until exp (either zero for unbounded). It replaces an existing file.
// Errors: exp not after nbf, or the file cannot be written.
func WriteValidity(dir string, nbf, exp time.Time) error {
	if !nbf.IsZero() && !exp.IsZero() && !exp.After(nbf) {
		return fmt.Errorf("key validity: exp %s is not after nbf %s", exp.UTC().Format(time.RFC3339), nbf.UTC().Format(time.RFC3339))
	}
	var v validity
	if !nbf.IsZero() {
		v.NotBefore = nbf.Unix()
	}
	if !exp.IsZero() {
		v.NotAfter = exp.Unix()
	}
	data, _ := json.Marshal(v)
	path := filepath.Join(dir, ValidityFile)
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readValidity reads dir's ValidityFile into k; a missing file leaves k
// unbounded.
func readValidity(dir string, k *Key) error {
	path := filepath.Join(dir, ValidityFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	data, err := keyfile.Read(path, 1)
	if err != nil {
		return err
	}
	var v validity
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("%s: want {\"nbf\": SECONDS, \"exp\": SECONDS}: %w", path, err)
	}
	if v.NotBefore < 0 || v.NotAfter < 0 || v.NotBefore != 0 && v.NotAfter != 0 && v.NotAfter <= v.NotBefore {
		return fmt.Errorf("%s: nbf %d and exp %d do not bound a validity (Unix seconds, exp after nbf)", path, v.NotBefore, v.NotAfter)
	}
	if v.NotBefore != 0 {
		k.NotBefore = time.Unix(v.NotBefore, 0)
	}
	if v.NotAfter != 0 {
		k.NotAfter = time.Unix(v.NotAfter, 0)
	}
	return nil
}

// ValidAt reports whether t lies in the key's validity: not before
// NotBefore and before NotAfter (a JWK's nbf and exp, RFC 7519 4.1.4 and
// 4.1.5), a zero bound being no bound.
func (k *Key) ValidAt(t time.Time) bool {
	return (k.NotBefore.IsZero() || !t.Before(k.NotBefore)) && (k.NotAfter.IsZero() || t.Before(k.NotAfter))
}

// validityError says why the key cannot sign at t, nil when it can.
func (k *Key) validityError(t time.Time) error {
	if k.ValidAt(t) {
		return nil
	}
	return fmt.Errorf("signing: key %s is valid from %s until %s, not at %s (%s): make another key active",
		k.ID, bound(k.NotBefore), bound(k.NotAfter), t.UTC().Format(time.RFC3339), ValidityFile)
}

func bound(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
