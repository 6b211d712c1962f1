package keyfile

import (
	"fmt"
	"io/fs"
)

// Masks of the permission bits a private key file must not have.
const (
	// OwnMask: in a file the process owns, nobody else may read or
	// write it (0600 or 0400).
	OwnMask fs.FileMode = 0o077
	// SharedMask: in a file another user owns (root, as in a Kubernetes
	// Secret volume with fsGroup, or a key shared through a group such
	// as ssl-cert), the file's group may read it, since that is how the
	// process reads it, but not write it, and others have no access
	// (0640 or 0440).
	SharedMask fs.FileMode = 0o037
)

// CheckMode returns an error when the private key file at path, whose
// os.Stat is fi, is open to more users than need it (the rule PostgreSQL
// applies to its server key): when the process owns the file, any
// access by group or others (OwnMask); when another user owns it, group
// write or any access by others (SharedMask). The error names the file,
// its mode and the chmod that fixes it, never the key. It never fails
// where file modes do not describe access (Windows).
func CheckMode(path string, fi fs.FileInfo) error {
	owned, ok := ownedByProcess(fi)
	if !ok {
		return nil
	}
	return ModeError(path, fi.Mode().Perm(), owned)
}

// ModeError is CheckMode's rule on a mode: perm of a file the process
// owns (owned) or that another user owns.
func ModeError(path string, perm fs.FileMode, owned bool) error {
	switch {
	case owned && perm&OwnMask != 0:
		return fmt.Errorf("%s has mode %#o: a private key must be readable by its owner only (chmod 600 %s)", path, perm, path)
	case !owned && perm&SharedMask != 0:
		return fmt.Errorf("%s has mode %#o and belongs to another user: a private key must be readable by that user and the file's group only, never by others (chmod 640 %s; in a Kubernetes Secret volume, defaultMode: 0440)", path, perm, path)
	}
	return nil
}
