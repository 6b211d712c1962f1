package mitm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// File names of the CA that DataDirCA keeps in a data directory, and of
// the lock it takes there while it creates one.
const (
	DataDirCert = "ca.pem"
	DataDirKey  = "ca-key.pem"
	DataDirLock = ".ca.lock"
)

// DirMode is the mode DataDirCA creates a data directory with: the CA key
// inside is secret.
const DirMode fs.FileMode = 0o700

// lockWait bounds how long DataDirCA waits for another process that is
// creating the CA: creating one takes milliseconds.
const lockWait = 30 * time.Second

// DataDirCA returns the CA kept in dir (DataDirCert and DataDirKey),
// creating dir (mode 0700, parents included) and the CA with InitCA (key
// 0600) when neither file exists yet. created says whether it did so.
//
// Two processes that start at once on one fresh directory (replicas on a
// shared volume, a service manager's restart) agree on one CA: the CA is
// created only under an exclusive lock on DataDirLock in dir (flock; on
// Windows LockFileEx), and the process that waited for the lock loads the
// CA the other one created. A pair found complete is loaded without the
// lock, so a read-only dir holding a CA works.
//
// Existing files are loaded with LoadCA and never overwritten: when only
// one of the two exists while nobody holds the lock (a copy or a removal
// went wrong, or a process died between the two files), or they do not
// load, the error names the file and nothing is written.
func DataDirCA(dir string) (ca *CA, certFile string, created bool, err error) {
	certFile, keyFile := filepath.Join(dir, DataDirCert), filepath.Join(dir, DataDirKey)
	// Without the lock, only a complete pair is taken: one file alone may
	// be another process's CA half written.
	if both, err := pairPresent(dir); err == nil && both {
		ca, err = LoadCA(certFile, keyFile)
		return ca, certFile, false, err
	}
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, certFile, false, fmt.Errorf("create data directory: %w", err)
	}
	unlock, err := lockDir(filepath.Join(dir, DataDirLock), lockWait)
	if err != nil {
		return nil, certFile, false, fmt.Errorf("data directory %s: %w", dir, err)
	}
	defer unlock()
	// Under the lock: whoever held it before has finished.
	if both, err := pairPresent(dir); err != nil || both {
		if err == nil {
			ca, err = LoadCA(certFile, keyFile)
		}
		return ca, certFile, false, err
	}
	ca, err = InitCA(certFile, keyFile, CAOptions{})
	if err != nil {
		return nil, certFile, false, fmt.Errorf("create CA in %s: %w", dir, err)
	}
	return ca, certFile, true, nil
}

// pairPresent reports whether dir holds both CA files; an error when it
// holds only one of them, or when either cannot be looked up.
func pairPresent(dir string) (bool, error) {
	certOK, err := exists(filepath.Join(dir, DataDirCert))
	if err != nil {
		return false, err
	}
	keyOK, err := exists(filepath.Join(dir, DataDirKey))
	if err != nil {
		return false, err
	}
	if certOK != keyOK {
		return false, fmt.Errorf("data directory %s holds only one of %s and %s: restore the other, or move both away to have a new CA created (clients must then trust the new one)", dir, DataDirCert, DataDirKey)
	}
	return certOK, nil
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

// lockDir takes the exclusive lock on the file at path (created 0600 when
// missing), waiting at most wait for a process that holds it, and returns
// the function that releases it. The lock goes with the process: one
// that dies holding it holds it no longer.
func lockDir(path string, wait time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the CA lock: %w", err)
	}
	deadline := time.Now().Add(wait)
	for poll := time.Millisecond; ; poll = min(2*poll, 50*time.Millisecond) {
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if held {
			return func() { f.Close() }, nil // closing the file releases the lock
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("another process has held %s for over %v while creating the CA: is it stuck? (remove nothing while it runs)", path, wait)
		}
		time.Sleep(poll)
	}
}
