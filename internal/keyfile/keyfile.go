// Package keyfile reads secret keys from files: the fleet's record key
// (shared.record_key_file) and the audit checkpoints' HMAC key
// (audit.checkpoint_hmac_key_file); and it holds the one rule on who may
// read a private key file (CheckMode), which the signing keys and the
// interception CA's key follow.
package keyfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxBytes bounds a key file: at most this many octets are read.
const MaxBytes = 4096

// Read returns the key in the file at path: its octets less surrounding
// white space, at least minBytes of them and at most MaxBytes (a longer
// file is an error and is not read whole). Errors name the file, never
// the key.
func Read(path string, minBytes int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, MaxBytes+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if n > MaxBytes {
		return nil, fmt.Errorf("%s is over %d octets", path, MaxBytes)
	}
	key := bytes.TrimSpace(buf[:n])
	switch {
	case len(key) == 0:
		return nil, fmt.Errorf("%s is empty: a key must not be", path)
	case len(key) < minBytes:
		return nil, fmt.Errorf("%s holds %d octets, want at least %d (e.g. openssl rand -base64 32)", path, len(key), minBytes)
	}
	return key, nil
}
