package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"testing"
)

// Every table loads as data: a header of column names, every record as
// long as it, counts as plain numbers (an estimate without its "~").
func TestCSVTablesLoadAsData(t *testing.T) {
	rep, _ := collectSample(t, Options{Now: fixedNow})
	for _, name := range TableNames() {
		var b bytes.Buffer
		if err := WriteCSVTable(&b, rep, name); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil || len(recs) == 0 {
			t.Fatalf("%s.csv: %v", name, err)
		}
		for _, num := range []string{"requests", "count", "total", "lines", "distinct_hosts", "unreachable_seconds", "error"} {
			i := slices.Index(recs[0], num)
			if i < 0 {
				continue
			}
			for _, r := range recs[1:] {
				if _, err := strconv.ParseUint(r[i], 10, 64); err != nil {
					t.Errorf("%s.csv column %s: %q is not a number", name, num, r[i])
				}
			}
		}
	}
	if err := WriteCSVTable(&bytes.Buffer{}, rep, "nosuch"); err == nil {
		t.Error("an unknown table: no error")
	}
}

func TestDataCells(t *testing.T) {
	e := approx(308, false)
	if cellText(e) != "~308" || csvCell(e) != "308" || cellText(approx(3, true)) != "3" || !isNumber(e) {
		t.Errorf("estimate cells: text %q, csv %q", cellText(e), csvCell(e))
	}
	if cellText(yesNo(true)) != "yes" || csvCell(yesNo(true)) != "true" || csvCell(yesNo(false)) != "false" {
		t.Errorf("flag cells: text %q, csv %q", cellText(yesNo(true)), csvCell(yesNo(true)))
	}
}
