package accesslog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// spill keeps a list of records (findings of one kind, skipped lines) on
// disk, a JSON object a line, so that memory stays bounded however many a
// log holds. The file is unlinked as soon as it is made (where the system
// allows): nothing is left behind, even on a crash.
type spill[T any] struct {
	f *os.File
	w *bufio.Writer
	n int64
}

// findingList keeps one kind of findings.
type findingList = spill[Finding]

func newFindingList(dir string) (*findingList, error) { return newSpill[Finding](dir) }

func newSpill[T any](dir string) (*spill[T], error) {
	f, err := os.CreateTemp(dir, "robotsproxy-access-log-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("findings: %w", err)
	}
	os.Remove(f.Name()) // open files stay readable
	return &spill[T]{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (l *spill[T]) add(f *T) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	l.n++
	b = append(b, '\n')
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("findings: %w", err)
	}
	return nil
}

// each calls fn with every record, in the order added.
func (l *spill[T]) each(fn func(*T) error) error {
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("findings: %w", err)
	}
	end, err := l.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("findings: %w", err)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(io.NewSectionReader(l.f, 0, end), 64<<10))
	for dec.More() {
		var f T
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("findings: %w", err)
		}
		if err := fn(&f); err != nil {
			return err
		}
	}
	return nil
}

// eachRaw calls fn with every record's JSON encoding (as add wrote it,
// without the line feed), in the order added; b is valid during the call.
func (l *spill[T]) eachRaw(fn func(b []byte) error) error {
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("findings: %w", err)
	}
	end, err := l.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("findings: %w", err)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(l.f, 0, end), 64<<10)
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			if err := fn(bytes.TrimSuffix(b, []byte{'\n'})); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("findings: %w", err)
		}
	}
}

func (l *spill[T]) close() error { return l.f.Close() }
