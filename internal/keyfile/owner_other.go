//go:build !unix

package keyfile

import "io/fs"

// ownedByProcess reports ok false: on this system file modes do not say
// who may read a file, so CheckMode checks nothing.
func ownedByProcess(fs.FileInfo) (owned, ok bool) { return false, false }
