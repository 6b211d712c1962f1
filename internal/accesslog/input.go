package accesslog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// MaxLine is the longest line read, in octets with its line feed; a
// longer line (a hostile or corrupt one) is counted in Skipped.TooLong and
// skipped without being held in memory.
const MaxLine = 64 << 10

// Skipped counts the lines that were not judged, by cause.
type Skipped struct {
	// Malformed lines do not parse in the log format.
	Malformed int64 `json:"malformed"`
	// TooLong lines are longer than MaxLine octets.
	TooLong int64 `json:"too_long"`
	// InvalidUTF8 lines are not valid UTF-8 (nginx and Apache escape
	// every non-ASCII octet, so such a line was not written by them).
	InvalidUTF8 int64 `json:"invalid_utf8"`
}

// Total is the number of lines skipped.
func (s Skipped) Total() int64 { return s.Malformed + s.TooLong + s.InvalidUTF8 }

// Why a line was skipped (SkippedLine.Cause): the keys of Skipped.
const (
	CauseMalformed   = "malformed"
	CauseTooLong     = "too_long"
	CauseInvalidUTF8 = "invalid_utf8"
)

// SkippedLine locates one line that was not judged, and says why.
type SkippedLine struct {
	// File is the log ("-" for stdin) and Line the 1-based line number.
	File string `json:"file"`
	Line int64  `json:"line"`
	// Cause is CauseMalformed, CauseTooLong or CauseInvalidUTF8; Reason
	// says what the parser found wrong with a malformed line.
	Cause  string `json:"cause"`
	Reason string `json:"reason,omitempty"`
}

// String is the skipped line on one line: "access.log:8899 malformed:
// unterminated User-Agent".
func (s *SkippedLine) String() string {
	if s.Reason == "" {
		return fmt.Sprintf("%s:%d %s", s.File, s.Line, s.Cause)
	}
	return fmt.Sprintf("%s:%d %s: %s", s.File, s.Line, s.Cause, s.Reason)
}

// logFile is an opened log.
type logFile struct {
	r     io.Reader // the lines, decompressed
	raw   io.Reader // the octets as stored, each one read also hashed
	close func() error
}

// openLog opens a log file, "-" for stdin; a gzip stream (by its magic
// octets, whatever the name) is decompressed. Every octet read from the
// file (compressed, as stored) is also written to sum.
func openLog(name string, stdin io.Reader, sum io.Writer) (*logFile, error) {
	lf := &logFile{close: func() error { return nil }}
	var r io.Reader
	if name == "-" {
		if stdin == nil {
			return nil, errors.New("read -: no standard input")
		}
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("open log: %w", err)
		}
		r, lf.close = f, f.Close
	}
	lf.raw = io.TeeReader(r, sum)
	br := bufio.NewReaderSize(lf.raw, MaxLine)
	lf.r = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			lf.close()
			return nil, fmt.Errorf("read log %s: gzip: %w", name, err)
		}
		lf.r = bufio.NewReaderSize(zr, MaxLine)
	}
	return lf, nil
}

// lineReader yields a log's lines, skipping and counting those longer
// than MaxLine or not valid UTF-8, in constant memory.
type lineReader struct {
	br   *bufio.Reader
	line int64 // 1-based number of the line last returned
	skip *Skipped
	// onSkip, when set, is told of each line skipped: its number, cause
	// and octets (nil for an overlong line), valid during the call.
	onSkip func(line int64, cause string, raw []byte) error
}

// next returns the next line (without its terminator) and its number;
// io.EOF at the end. The line is valid until the next call.
func (r *lineReader) next() ([]byte, error) {
	for {
		b, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.line++
			r.skip.TooLong++
			if err := r.skipped(CauseTooLong, nil); err != nil {
				return nil, err
			}
			if err := r.discard(); err != nil {
				return nil, err
			}
			continue
		}
		if len(b) == 0 && err != nil {
			return nil, err
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		r.line++
		b = bytes.TrimRight(b, "\r\n")
		if !utf8.Valid(b) {
			r.skip.InvalidUTF8++
			if err := r.skipped(CauseInvalidUTF8, b); err != nil {
				return nil, err
			}
			continue
		}
		return b, nil
	}
}

func (r *lineReader) skipped(cause string, raw []byte) error {
	if r.onSkip == nil {
		return nil
	}
	return r.onSkip(r.line, cause, raw)
}

// discard skips the rest of an overlong line.
func (r *lineReader) discard() error {
	for {
		_, err := r.br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil, errors.Is(err, io.EOF):
			return nil
		}
		return err
	}
}

// bufioReader reuses r when it is a large enough *bufio.Reader.
func bufioReader(r io.Reader) *bufio.Reader {
	if br, ok := r.(*bufio.Reader); ok && br.Size() >= MaxLine {
		return br
	}
	return bufio.NewReaderSize(r, MaxLine)
}
