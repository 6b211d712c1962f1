package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// renderJSON writes r as one JSON object, the same as json.Marshal(r) but
// a section row at a time (one row a line), so that the output is never
// held whole in memory: with every key at its 2 KiB limit, the tracked
// rows alone can take over a hundred MiB of JSON.
func renderJSON(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fields := []struct {
		key string
		v   any
	}{
		{"version", r.Version}, {"generated_at", r.GeneratedAt}, {"filters", r.Filters},
		{"inputs", r.Inputs}, {"summary", r.Summary}, {"tokens", r.Tokens},
		{"violations", r.Violations}, {"hosts", r.Hosts}, {"rules", r.Rules},
		{"denied_urls", r.DeniedURLs}, {"timelines", r.Timelines},
	}
	for i, f := range fields {
		sep := ",\n"
		if i == 0 {
			sep = "{"
		}
		fmt.Fprintf(ew, "%s%q:", sep, f.key)
		var err error
		if s, ok := f.v.(rowStreamer); ok {
			err = s.streamJSON(ew)
		} else {
			err = writeJSONValue(ew, f.v)
		}
		if err != nil {
			return err
		}
	}
	io.WriteString(ew, "}\n")
	return ew.err
}

type rowStreamer interface{ streamJSON(w io.Writer) error }

func writeJSONValue(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// streamJSON writes the section with its rows one by one: the section
// without rows is marshalled and its leading "rows":null replaced.
func (s Section[T]) streamJSON(w io.Writer) error {
	rows := s.Rows
	s.Rows = nil
	head, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	rest, ok := bytes.CutPrefix(head, []byte(`{"rows":null`))
	if !ok {
		return fmt.Errorf("json: unexpected section encoding %.40s", head)
	}
	io.WriteString(w, `{"rows":[`)
	for i := range rows {
		if i > 0 {
			io.WriteString(w, ",")
		}
		io.WriteString(w, "\n")
		if err := writeJSONValue(w, rows[i]); err != nil {
			return err
		}
	}
	io.WriteString(w, "]")
	_, err = w.Write(rest)
	return err
}
