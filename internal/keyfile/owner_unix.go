//go:build unix

package keyfile

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByProcess reports whether the process's effective user owns the
// file of fi; ok is false when fi says nothing of an owner.
func ownedByProcess(fi fs.FileInfo) (owned, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, false
	}
	return int(st.Uid) == os.Geteuid(), true
}
