package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// maxLine bounds one audit line with its newline: auditlog.MaxLineBytes,
// the one limit of every reader, and the newline. A longer line is skipped
// ("line too long") and read past without being held in memory.
const maxLine = auditlog.MaxLineBytes + 1

// readBuf is the size of each read buffer: the compressed and the line
// reader each have one.
const readBuf = 256 << 10

// source is one log named on the command line.
type source struct {
	name  string
	first int64 // time of its first valid line, when known
	known bool
	pos   int
	lr    *bufio.Reader // kept open for stdin, which cannot be read twice
	gz    bool
	c     io.Closer
	err   *gzipError // an unreadable gzip header found while ordering
}

// openLog opens a log: "-" is stdin; a gzip stream is recognised by its
// magic octets 1f 8b, whatever the name. A gzip header that cannot be read
// is returned as a *gzipError (counted, not fatal); other errors are I/O
// errors.
func openLog(name string, stdin io.Reader) (lr *bufio.Reader, gz bool, c io.Closer, err error) {
	var r io.Reader = stdin
	c = io.NopCloser(nil)
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, false, nil, err
		}
		r, c = f, f
	}
	br := bufio.NewReaderSize(r, readBuf)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			c.Close()
			return nil, true, nil, &gzipError{err}
		}
		return bufio.NewReaderSize(zr, readBuf), true, c, nil
	}
	return br, false, c, nil
}

type gzipError struct{ err error }

func (e *gzipError) Error() string { return "unreadable gzip stream: " + e.err.Error() }
func (e *gzipError) Unwrap() error { return e.err }

// orderSources opens each log to find the time of its first valid line
// (within the first read buffer) and sorts them by it, so that rotated
// files named in any order are read oldest first; logs without a known
// time keep their command-line order after the others. Files are closed
// again; stdin stays open. Errors are I/O errors opening a file.
func orderSources(names []string, stdin io.Reader) ([]*source, error) {
	var srcs []*source
	stdinSeen := false
	for i, name := range names {
		if name == "-" {
			if stdinSeen {
				return nil, errors.New(`"-" (stdin) named twice`)
			}
			stdinSeen = true
		}
		s := &source{name: name, pos: i}
		lr, gz, c, err := openLog(name, stdin)
		var gerr *gzipError
		switch {
		case errors.As(err, &gerr):
			s.gz, s.err = true, gerr // reported when read, in order
			srcs = append(srcs, s)
			continue
		case err != nil:
			return nil, err
		}
		s.gz = gz
		s.first, s.known = firstTime(lr)
		if name == "-" {
			s.lr, s.c = lr, c
		} else {
			c.Close()
		}
		srcs = append(srcs, s)
	}
	sort.SliceStable(srcs, func(a, b int) bool {
		x, y := srcs[a], srcs[b]
		if x.known != y.known {
			return x.known
		}
		return x.known && x.first < y.first
	})
	return srcs, nil
}

func firstTime(lr *bufio.Reader) (int64, bool) {
	buf, _ := lr.Peek(readBuf)
	var r record
	for len(buf) > 0 {
		line := buf
		i := bytes.IndexByte(buf, '\n')
		if i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		if parseRecord(line, &r) == nil {
			return r.Time, true
		}
	}
	return 0, false
}

// readSource streams one log into a, counting its lines in in.
func (a *aggregator) readSource(s *source, stdin io.Reader, in *Input) error {
	lr, c := s.lr, s.c
	in.Gzip = s.gz
	if s.err != nil {
		a.skips.input(s.name, 0, s.err)
		return nil
	}
	if lr == nil {
		var err error
		lr, in.Gzip, c, err = openLog(s.name, stdin)
		var gerr *gzipError
		if errors.As(err, &gerr) {
			in.Gzip = true
			a.skips.input(s.name, 0, err)
			return nil
		}
		if err != nil {
			return err
		}
	}
	defer c.Close()
	var (
		long []byte
		rec  record
		n    int
	)
	for {
		line, err := readLine(lr, &long)
		line = bytes.TrimSuffix(line, []byte("\r")) // CRLF: a blank line stays blank
		if len(line) > 0 || errors.Is(err, auditlog.ErrTooLong) {
			n++
			in.Lines++
			a.lines++
			perr := err
			if !errors.Is(perr, auditlog.ErrTooLong) {
				perr = parseRecord(line, &rec)
			}
			if perr != nil {
				in.Skipped++
				a.skips.line(s.name, n, perr)
			} else {
				a.add(&rec)
			}
		}
		switch {
		case err == nil, errors.Is(err, auditlog.ErrTooLong):
		case errors.Is(err, io.EOF):
			return nil
		default:
			if in.Gzip {
				err = &gzipError{err}
			}
			a.skips.input(s.name, n, err)
			return nil
		}
	}
}

// readLine returns the next line without its newline. A line longer than
// maxLine is read past and reported as auditlog.ErrTooLong; long is the reused
// buffer for lines longer than the reader's buffer. At the end of input it
// returns the last unterminated line with io.EOF (or another read error).
func readLine(lr *bufio.Reader, long *[]byte) ([]byte, error) {
	b, err := lr.ReadSlice('\n')
	if err == nil {
		return b[:len(b)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return b, err
	}
	*long = append((*long)[:0], b...)
	tooLong := false
	for errors.Is(err, bufio.ErrBufferFull) {
		b, err = lr.ReadSlice('\n')
		if !tooLong && len(*long)+len(b) > maxLine {
			tooLong = true
			*long = (*long)[:0]
		}
		if !tooLong {
			*long = append(*long, b...)
		}
	}
	if tooLong {
		if err == nil {
			err = auditlog.ErrTooLong
		} else if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w at end of input", auditlog.ErrTooLong)
		}
		return nil, err
	}
	if err == nil {
		return (*long)[:len(*long)-1], nil
	}
	return *long, err
}
