package mitm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File modes InitCA gives the files it writes.
const (
	KeyFileMode  fs.FileMode = 0o600
	CertFileMode fs.FileMode = 0o644
)

// InitCA generates a CA with NewCA and writes its certificate to certFile
// (PEM "CERTIFICATE", mode 0644) and its key to keyFile (PEM "PRIVATE KEY"
// PKCS#8, mode 0600), and returns it so the caller can print details such
// as Fingerprint.
//
// InitCA never overwrites: it fails, naming the path, when either file
// already exists, when both arguments name the same file, or when the
// directory is missing. Each file is written to a temporary file in the
// same directory and then hard-linked into place, which fails if the name
// was taken meanwhile; a reader never sees a partial file. If writing the
// certificate fails after the key was written, the key file is removed
// again, so a failed InitCA leaves neither file behind.
func InitCA(certFile, keyFile string, opts CAOptions) (*CA, error) {
	if err := checkNewFiles(certFile, keyFile); err != nil {
		return nil, err
	}
	ca, err := NewCA(opts)
	if err != nil {
		return nil, err
	}
	keyPEM, err := ca.KeyPEM()
	if err != nil {
		return nil, err
	}
	if err := writeNewFile(keyFile, keyPEM, KeyFileMode); err != nil {
		return nil, fmt.Errorf("write CA key %s: %w", keyFile, err)
	}
	if err := writeNewFile(certFile, ca.CertPEM(), CertFileMode); err != nil {
		if rmErr := os.Remove(keyFile); rmErr != nil {
			err = errors.Join(err, fmt.Errorf("remove CA key %s again: %w", keyFile, rmErr))
		}
		return nil, fmt.Errorf("write CA certificate %s: %w", certFile, err)
	}
	return ca, nil
}

// checkNewFiles fails early, before a key is generated, when the two paths
// are empty, equal or already exist.
func checkNewFiles(certFile, keyFile string) error {
	if certFile == "" || keyFile == "" {
		return errors.New("init CA: certificate and key file names must not be empty")
	}
	if filepath.Clean(certFile) == filepath.Clean(keyFile) {
		return fmt.Errorf("init CA: certificate and key must be different files, both are %s", certFile)
	}
	for _, p := range []string{keyFile, certFile} {
		_, err := os.Lstat(p)
		if err == nil {
			return fmt.Errorf("init CA: %s already exists; refusing to overwrite it: %w", p, fs.ErrExist)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("init CA: %w", err)
		}
	}
	return nil
}

// writeNewFile creates path with exactly data and mode, failing with an
// error wrapping fs.ErrExist if path exists. It writes a temporary file in
// the same directory and links it into place, so path never holds partial
// content.
func writeNewFile(path string, data []byte, mode fs.FileMode) error {
	tmp, err := writeTemp(filepath.Dir(path), data, mode)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// No hard links on this file system: fall back to O_EXCL.
		err = writeExclusive(path, data, mode)
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; refusing to overwrite it: %w", path, fs.ErrExist)
	}
	return err
}

// writeExclusive creates path with O_EXCL and writes data, removing the
// file again if the write fails.
func writeExclusive(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// writeTemp writes data to a new temporary file in dir with the given mode
// (set explicitly, so the umask does not apply) and returns its name.
func writeTemp(dir string, data []byte, mode fs.FileMode) (name string, err error) {
	f, err := os.CreateTemp(dir, ".robotsproxy-ca-*.tmp")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}
