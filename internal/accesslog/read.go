package accesslog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Read judges every line of the log r (decompressed already), named name
// in findings ("-" for standard input). Malformed, overlong and
// non-UTF-8 lines are counted, located (Result.SkippedLines) and skipped;
// but when most of the first SampleLines non-blank lines are, the log is
// not in the chosen format and Read returns a *FormatError saying what it
// looks like. Other errors are I/O errors, a robots.txt version that
// cannot be read, or ctx ending (checked every 4,096 lines read).
func (a *Auditor) Read(ctx context.Context, name string, r io.Reader) error {
	a.res.Summary.Files = append(a.res.Summary.Files, name)
	sum := &a.res.Summary
	p := a.o.NewParser()
	fc := &formatCheck{file: name, format: formatName(p)}
	lr := &lineReader{br: bufioReader(r), skip: &sum.Skipped}
	lr.onSkip = func(line int64, cause string, raw []byte) error {
		fc.skip(line, causeText(cause), raw)
		if err := a.res.skipped.add(&SkippedLine{File: name, Line: line, Cause: cause}); err != nil {
			return err
		}
		return fc.check(false)
	}
	var e Entry
	for n := 1; ; n++ {
		line, err := lr.next()
		if err == io.EOF {
			sum.Lines = lr.line + sum.Lines
			return fc.check(true)
		}
		var fe *FormatError
		if errors.As(err, &fe) {
			return fe
		}
		if err != nil {
			return fmt.Errorf("read log %s: line %d: %w", name, lr.line+1, err)
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("read log %s: stopped at line %d: %w", name, lr.line, context.Cause(ctx))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := p.Parse(line, &e); err != nil {
			if err := a.malformed(fc, name, lr.line, line, err); err != nil {
				return err
			}
			continue
		}
		fc.parsed()
		if err := fc.check(false); err != nil {
			return err
		}
		if err := a.judge(ctx, name, lr.line, &e); err != nil {
			return err
		}
	}
}

// malformed counts, locates and samples a line that does not parse.
func (a *Auditor) malformed(fc *formatCheck, file string, n int64, line []byte, perr error) error {
	a.res.Summary.Skipped.Malformed++
	reason := malformedReason(perr)
	fc.skip(n, CauseMalformed+": "+reason, line)
	if err := a.res.skipped.add(&SkippedLine{File: file, Line: n, Cause: CauseMalformed, Reason: reason}); err != nil {
		return err
	}
	return fc.check(false)
}

// malformedReason is a parse error without its "malformed line: "
// prefix, cut to 200 octets.
func malformedReason(err error) string {
	s := strings.TrimPrefix(err.Error(), errMalformed.Error()+": ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	return s
}

// causeText says a skip cause in words.
func causeText(cause string) string {
	switch cause {
	case CauseTooLong:
		return fmt.Sprintf("longer than %d KiB", MaxLine>>10)
	case CauseInvalidUTF8:
		return "not UTF-8"
	}
	return cause
}

// formatName names the format a parser reads, as -log-format does.
func formatName(p Parser) string {
	switch p.(type) {
	case *Combined:
		return "combined"
	case *JSONParser:
		return "json"
	}
	return "the chosen format"
}

// ReadFile judges the log file path ("-": stdin), gzipped or not, and
// records its SHA-256 and line count in Summary.Inputs.
func (a *Auditor) ReadFile(ctx context.Context, path string, stdin io.Reader) error {
	h := sha256.New()
	lf, err := openLog(path, stdin, h)
	if err != nil {
		return err
	}
	defer lf.close()
	before := a.res.Summary.Lines
	if err := a.Read(ctx, path, lf.r); err != nil {
		return err
	}
	// Whatever follows a gzip stream's end is hashed too.
	if _, err := io.Copy(io.Discard, lf.raw); err != nil {
		return fmt.Errorf("read log %s: %w", path, err)
	}
	a.res.Summary.Inputs = append(a.res.Summary.Inputs, Input{File: path, SHA256: hex.EncodeToString(h.Sum(nil)),
		Lines: a.res.Summary.Lines - before})
	return nil
}
