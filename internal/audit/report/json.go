package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// renderJSON writes r as one JSON object, the same as json.Marshal(r) but
// a section row at a time (one row a line), each encoded into one reused
// buffer, so that neither the output nor a copy of each row is held: with
// every key at its 2 KiB limit, the tracked rows alone can take tens of
// MiB of JSON.
func renderJSON(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	j := &jsonWriter{w: ew}
	j.enc = json.NewEncoder(&j.buf)
	if err := j.object(reflect.ValueOf(*r), ",\n"); err != nil {
		return err
	}
	io.WriteString(ew, "\n")
	return ew.err
}

// streamed marks the structs that jsonWriter.object writes field by
// field: the Report, a Section (its rows one by one) and what holds
// sections.
type streamed interface{ streamed() }

func (Report) streamed()     {}
func (Spend) streamed()      {}
func (Section[T]) streamed() {}

// jsonWriter writes JSON values to w, each encoded into one reused buffer
// first (as json.Marshal encodes it, without a newline after).
type jsonWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

func (j *jsonWriter) value(v any) error {
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	_, err := j.w.Write(bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")))
	return err
}

// object writes the struct v as json.Marshal does (its exported fields,
// named by their json tags), fields apart by sep: a field that is
// streamed is written the same way, and a Section's rows one a line.
func (j *jsonWriter) object(v reflect.Value, sep string) error {
	_, section := v.Interface().(interface{ sectionRows() })
	io.WriteString(j.w, "{")
	n := 0
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || strings.Contains(opts, "omitempty") && empty(fv) {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if n++; n > 1 {
			io.WriteString(j.w, sep)
		}
		fmt.Fprintf(j.w, "%q:", name)
		var err error
		switch _, inner := fv.Interface().(streamed); {
		case section && f.Name == "Rows":
			err = j.rows(fv)
		case inner:
			err = j.object(fv, ",")
		default:
			err = j.value(fv.Interface())
		}
		if err != nil {
			return err
		}
	}
	_, err := io.WriteString(j.w, "}")
	return err
}

func (Section[T]) sectionRows() {}

// rows writes a slice one element a line.
func (j *jsonWriter) rows(v reflect.Value) error {
	io.WriteString(j.w, "[")
	for i := range v.Len() {
		if i > 0 {
			io.WriteString(j.w, ",")
		}
		io.WriteString(j.w, "\n")
		if err := j.value(v.Index(i).Interface()); err != nil {
			return err
		}
	}
	_, err := io.WriteString(j.w, "]")
	return err
}

// empty is encoding/json's empty value, which omitempty leaves out.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Struct:
		return false
	}
	return v.IsZero()
}
