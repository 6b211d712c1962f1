package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// renderJSON writes r as one JSON object, the same as json.Marshal(r) but
// a section row at a time (one row a line), each encoded into one reused
// buffer, so that neither the output nor a copy of each row is held: with
// every key at its 2 KiB limit, the tracked rows alone can take tens of
// MiB of JSON.
func renderJSON(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	enc := newJSONWriter(ew)
	fields := []struct {
		key string
		v   any
	}{
		{"version", r.Version}, {"generated_at", r.GeneratedAt}, {"filters", r.Filters},
		{"inputs", r.Inputs}, {"summary", r.Summary}, {"integrity", r.Integrity}, {"tokens", r.Tokens},
		{"violations", r.Violations}, {"hosts", r.Hosts}, {"rules", r.Rules},
		{"denied_urls", r.DeniedURLs}, {"spend", r.Spend}, {"timelines", r.Timelines},
	}
	for i, f := range fields {
		sep := ",\n"
		if i == 0 {
			sep = "{"
		}
		fmt.Fprintf(ew, "%s%q:", sep, f.key)
		var err error
		if s, ok := f.v.(rowStreamer); ok {
			err = s.streamJSON(enc)
		} else {
			err = enc.value(f.v)
		}
		if err != nil {
			return err
		}
	}
	io.WriteString(ew, "}\n")
	return ew.err
}

type rowStreamer interface{ streamJSON(j *jsonWriter) error }

// jsonWriter writes JSON values to w, each encoded into one reused buffer
// first (as json.Marshal encodes it, without a newline after).
type jsonWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

func newJSONWriter(w io.Writer) *jsonWriter {
	j := &jsonWriter{w: w}
	j.enc = json.NewEncoder(&j.buf)
	return j
}

// encode leaves v's encoding in j.buf, without the encoder's newline.
func (j *jsonWriter) encode(v any) ([]byte, error) {
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	return bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")), nil
}

func (j *jsonWriter) value(v any) error {
	b, err := j.encode(v)
	if err != nil {
		return err
	}
	_, err = j.w.Write(b)
	return err
}

// streamJSON writes the section with its rows one by one: the section
// without rows is encoded and its leading "rows":null replaced.
func (s Section[T]) streamJSON(j *jsonWriter) error {
	rows := s.Rows
	s.Rows = nil
	head, err := j.encode(s)
	if err != nil {
		return err
	}
	rest, ok := bytes.CutPrefix(head, []byte(`{"rows":null`))
	if !ok {
		return fmt.Errorf("json: unexpected section encoding %.40s", head)
	}
	rest = bytes.Clone(rest) // the buffer is reused for the rows
	io.WriteString(j.w, `{"rows":[`)
	for i := range rows {
		if i > 0 {
			io.WriteString(j.w, ",")
		}
		io.WriteString(j.w, "\n")
		if err := j.value(rows[i]); err != nil {
			return err
		}
	}
	io.WriteString(j.w, "]")
	_, err = j.w.Write(rest)
	return err
}
