package command

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// writeAtomic writes what render writes to path, stdout when empty. A
// file is written whole or not at all: to a temporary name, renamed at
// the end.
func writeAtomic(path string, stdout io.Writer, render func(io.Writer) error) error {
	if path == "" {
		bw := bufio.NewWriter(stdout)
		return errors.Join(render(bw), bw.Flush())
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("-o %s: not a regular file (%s); name a file to create or replace", path, fileKind(fi.Mode()))
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = errors.Join(render(bw), bw.Flush(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// fileKind names a file mode's type for an error message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
