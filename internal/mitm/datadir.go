package mitm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File names of the CA that DataDirCA keeps in a data directory.
const (
	DataDirCert = "ca.pem"
	DataDirKey  = "ca-key.pem"
)

// DirMode is the mode DataDirCA creates a data directory with: the CA key
// inside is secret.
const DirMode fs.FileMode = 0o700

// DataDirCA returns the CA kept in dir (DataDirCert and DataDirKey),
// creating dir (mode 0700, parents included) and the CA with InitCA (key
// 0600) when neither file exists yet. created says whether it did so.
// Existing files are loaded with LoadCA and never overwritten: when only
// one of the two exists, or they do not load, the error names the file and
// nothing is written. Two processes starting at once agree on one CA: the
// one that loses the race to create the files loads the winner's.
func DataDirCA(dir string) (ca *CA, certFile string, created bool, err error) {
	certFile, keyFile := filepath.Join(dir, DataDirCert), filepath.Join(dir, DataDirKey)
	certOK, err := exists(certFile)
	if err != nil {
		return nil, certFile, false, err
	}
	keyOK, err := exists(keyFile)
	if err != nil {
		return nil, certFile, false, err
	}
	switch {
	case certOK && keyOK:
		ca, err = LoadCA(certFile, keyFile)
		return ca, certFile, false, err
	case certOK || keyOK:
		return nil, certFile, false, fmt.Errorf("data directory %s holds only one of %s and %s: restore the other, or move both away to have a new CA created (clients must then trust the new one)", dir, DataDirCert, DataDirKey)
	}
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, certFile, false, fmt.Errorf("create data directory: %w", err)
	}
	ca, err = InitCA(certFile, keyFile, CAOptions{})
	if errors.Is(err, fs.ErrExist) { // another process created it meanwhile
		ca, err = LoadCA(certFile, keyFile)
		return ca, certFile, false, err
	}
	if err != nil {
		return nil, certFile, false, fmt.Errorf("create CA in %s: %w", dir, err)
	}
	return ca, certFile, true, nil
}

// exists reports whether path exists; errors other than "does not exist"
// are returned with the path.
func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("data directory: %w", err)
}
