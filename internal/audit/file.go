package audit

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/natefinch/lumberjack.v2"
)

// FileOptions name an audit log file and its rotation.
type FileOptions struct {
	// Path is the log file.
	Path string
	// MaxSizeMB rotates the file at this size in MiB; 0 never rotates.
	MaxSizeMB int
	// MaxBackups is how many rotated files are kept; 0 keeps all.
	MaxBackups int
	// MaxAgeDays removes rotated files older than this; 0 keeps them.
	MaxAgeDays int
}

// tailBytes is how much of a file's end is read to find its last line:
// more than the longest audit line.
const tailBytes = 256 << 10

// OpenFile prepares the audit log file for appending and returns the
// rotating writer (lumberjack; it is an Unwriter, see logFile) and the SHA-256 of the last line already in
// the log (zero when there is none), for Options.Prev.
//
// A file that does not end in a newline (a crash in the middle of a write)
// gets one first, so the next line starts on a line of its own; the cut
// line stays as evidence and breaks no later line.
func OpenFile(o FileOptions) (io.WriteCloser, [sha256.Size]byte, error) {
	var prev [sha256.Size]byte
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o755); err != nil {
		return nil, prev, fmt.Errorf("audit log %s: %w", o.Path, err)
	}
	last, err := repairTail(o.Path)
	if err != nil {
		return nil, prev, fmt.Errorf("audit log %s: %w", o.Path, err)
	}
	if last == nil {
		last = lastLineOfNewestBackup(o.Path)
	}
	if last != nil {
		prev = sha256.Sum256(last)
	}
	lj := &lumberjack.Logger{Filename: o.Path, MaxSize: o.MaxSizeMB, MaxBackups: o.MaxBackups, MaxAge: o.MaxAgeDays}
	if o.MaxSizeMB == 0 {
		lj.MaxSize = 1 << 20 // MiB: in effect never
	}
	return &logFile{Logger: lj, path: o.Path}, prev, nil
}

// logFile is the rotating audit log file. Unwrite takes back the octets of
// a failed write, so the file never holds a cut line that the next one
// would merge with.
type logFile struct {
	*lumberjack.Logger
	path string
}

// Unwrite truncates the last n octets of the current file: a partial write
// (lumberjack writes to the current file only, after any rotation). The
// file is closed first: lumberjack writes a file it created at its own
// offset, and reopens it for appending on the next write.
func (f *logFile) Unwrite(n int) error {
	if err := f.Logger.Close(); err != nil {
		return err
	}
	fh, err := os.OpenFile(f.path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	st, err := fh.Stat()
	if err == nil && st.Size() < int64(n) {
		err = fmt.Errorf("%s holds %d octets, fewer than the %d to take back", f.path, st.Size(), n)
	}
	if err == nil {
		err = fh.Truncate(st.Size() - int64(n))
	}
	return errors.Join(err, fh.Close())
}

// repairTail appends a newline to path when it does not end in one, and
// returns its last line (newline included), nil when it has none. A
// missing file is no error.
func repairTail(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tail, err := readTail(f)
	if err != nil || len(tail) == 0 {
		return nil, err
	}
	if tail[len(tail)-1] != '\n' {
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			return nil, err
		}
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return nil, fmt.Errorf("repair the cut last line: %w", err)
		}
		tail = append(tail, '\n')
	}
	return lastLine(tail), nil
}

// readTail returns up to tailBytes from the end of f.
func readTail(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(st.Size()-tailBytes, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

// lastLine returns the last line of b, which ends in a newline.
func lastLine(b []byte) []byte {
	i := bytes.LastIndexByte(b[:len(b)-1], '\n')
	return b[i+1:]
}

// lastLineOfNewestBackup returns the last line of the newest rotated file
// (lumberjack's NAME-TIMESTAMP.EXT beside path), nil when there is none.
func lastLineOfNewestBackup(path string) []byte {
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-"
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return nil
	}
	var backups []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ext) {
			backups = append(backups, n)
		}
	}
	sort.Strings(backups) // timestamps sort in time order
	for i := len(backups) - 1; i >= 0; i-- {
		f, err := os.Open(filepath.Join(dir, backups[i]))
		if err != nil {
			continue
		}
		tail, err := readTail(f)
		f.Close()
		if err == nil && len(tail) > 0 && tail[len(tail)-1] == '\n' {
			return lastLine(tail)
		}
	}
	return nil
}
