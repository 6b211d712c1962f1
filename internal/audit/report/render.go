package report

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Formats are the formats Render accepts.
func Formats() []string { return []string{"text", "json", "csv", "html"} }

// Render writes r in format: "text" (aligned plain text), "json" (the
// Report as one JSON object), "csv" (every table stacked in one stream,
// each row led by its section name, each table led by a header row whose
// first cell is "section": for a person; WriteCSVTable writes a table
// a program loads), or "html" (one self-contained page with
// inline SVG charts).
// Errors are write errors and an unknown format.
func Render(w io.Writer, r *Report, format string) error {
	switch format {
	case "text":
		return renderText(w, r)
	case "json":
		return renderJSON(w, r)
	case "csv":
		return renderCSV(w, r)
	case "html":
		return renderHTML(w, r)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats(), ", "))
}

// maxTextCell bounds a text cell; longer values (URLs, rules) are cut
// with an ellipsis. The json and csv formats keep them whole.
const maxTextCell = 60

func renderText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "robotsproxy audit report, generated %s\n", r.GeneratedAt.Format(time.RFC3339))
	if f := filterText(r.Filters); f != "" {
		fmt.Fprintf(ew, "filters: %s\n", f)
	}
	for _, t := range tables(r) {
		if !t.shown() {
			continue
		}
		fmt.Fprintf(ew, "\n== %s ==\n", t.title)
		if len(t.rows) == 0 {
			fmt.Fprintln(ew, t.empty)
			continue
		}
		writeAligned(ew, t)
		for _, n := range t.notes {
			fmt.Fprintf(ew, "(%s)\n", n)
		}
	}
	return ew.err
}

func filterText(f Filters) string {
	var parts []string
	if f.Since != nil {
		parts = append(parts, "since "+f.Since.Format(time.RFC3339))
	}
	if f.Until != nil {
		parts = append(parts, "until "+f.Until.Format(time.RFC3339))
	}
	if f.Token != "" {
		parts = append(parts, "token "+f.Token)
	}
	if f.Host != "" {
		parts = append(parts, "host "+f.Host)
	}
	return strings.Join(parts, ", ")
}

// writeAligned writes a table's rows in columns: numbers right-aligned,
// text left-aligned, two spaces apart.
func writeAligned(w io.Writer, t table) {
	view := t.viewCols()
	cells := make([][]string, 0, len(t.rows)+1)
	hdr := make([]string, len(view))
	for j, i := range view {
		hdr[j] = t.cols[i].label
	}
	cells = append(cells, hdr)
	numeric := make([]bool, len(view))
	for _, row := range t.rows {
		line := make([]string, len(view))
		for j, i := range view {
			line[j] = cellText(row[i])
			if !t.whole {
				line[j] = cut(line[j], maxTextCell)
			}
			numeric[j] = numeric[j] || isNumber(row[i])
		}
		cells = append(cells, line)
	}
	width := make([]int, len(view))
	for _, line := range cells {
		for i, c := range line {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, line := range cells {
		b.Reset()
		for i, c := range line {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if numeric[i] {
				c = pad + c
			} else if i < len(line)-1 {
				c += pad
			}
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// cut returns s cut to n runes, the last an ellipsis when it was longer.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	var b strings.Builder
	for _, r := range s { // an invalid octet reads as U+FFFD, as in []rune(s)
		if n--; n == 0 {
			break
		}
		b.WriteRune(r)
	}
	b.WriteString("…")
	return b.String()
}

// errWriter keeps the first write error and drops later writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
