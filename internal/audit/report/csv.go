package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/csvcell"
)

// renderCSV writes every table stacked: each row led by its section name,
// each table led by a header row whose first cell is "section".
func renderCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	for _, t := range tables(r) {
		if err := writeCSV(cw, t, true); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCSVTable writes the table called name (one of TableNames) as CSV:
// a header row of column names, then one record a row, every record as
// long as the header. Errors are an unknown name and write errors.
func WriteCSVTable(w io.Writer, r *Report, name string) error {
	for _, t := range tables(r) {
		if t.name == name {
			cw := csv.NewWriter(w)
			if err := writeCSV(cw, t, false); err != nil {
				return err
			}
			cw.Flush()
			return cw.Error()
		}
	}
	return fmt.Errorf("no table %q (want one of %s)", name, strings.Join(TableNames(), ", "))
}

// writeCSV writes one table's header and rows; stacked leads each record
// with the section ("section" in the header).
func writeCSV(cw *csv.Writer, t table, stacked bool) error {
	data := t.dataCols()
	hdr := make([]string, 0, len(data)+1)
	if stacked {
		hdr = append(hdr, "section")
	}
	for _, i := range data {
		hdr = append(hdr, t.cols[i].key)
	}
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for _, row := range t.rows {
		rec := hdr[:0:0]
		if stacked {
			rec = append(rec, t.name)
		}
		for _, i := range data {
			rec = append(rec, csvCell(row[i]))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	return nil
}

// csvCell writes a cell as data: seconds as a number, digests whole, text
// made safe for spreadsheets.
func csvCell(v any) string {
	switch v := v.(type) {
	case seconds:
		return strconv.FormatInt(int64(v), 10)
	case sha:
		return string(v)
	case estimate:
		return strconv.FormatUint(v.n, 10)
	case yesNo:
		return strconv.FormatBool(bool(v))
	case string:
		return csvcell.Safe(v)
	}
	return cellText(v)
}

// IsTable reports whether name is one of TableNames.
func IsTable(name string) bool { return slices.Contains(TableNames(), name) }
