package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// referencePage is the configuration reference, whose key table
// checkKeyTable keeps equal to config.Config and config.Default.
var referencePage = filepath.Join("..", "..", "docs", "configuration.md")

// keyRow is a row of the reference's key table: its keys, its defaults
// (each in backticks), and what its default cell says after them ("(512
// MiB)").
type keyRow struct {
	line             int // index in the page's lines
	keys, defaults   []string
	note, meaning    string
	cells            []string
	hasKey, hasValue bool
}

// checkKeyTable checks the reference's table (| key | default | meaning |):
// every key of the file (keys, list elements' keys aside) has a row, every
// key a row names is a key, and each row's default column is the keys'
// defaults in config.Default, as a configuration file writes them. With
// ROBOTSPROXY_UPDATE_DOCS=1 it writes the default column (and a row for a
// key without one, whose meaning is then to write) instead.
func checkKeyTable(t *testing.T, keys []configKey) {
	t.Helper()
	raw, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	rows, end := keyTable(lines)
	if len(rows) == 0 {
		t.Fatalf("%s: no table | key | default | meaning |", referencePage)
	}
	def := reflect.ValueOf(config.Default())
	known := map[string]bool{}
	var missing []string
	for _, k := range keys {
		if k.list == "" {
			known[k.path] = true
			if !slices.ContainsFunc(rows, func(r keyRow) bool { return slices.Contains(r.keys, k.path) }) {
				missing = append(missing, k.path)
			}
		}
	}
	update := os.Getenv("ROBOTSPROXY_UPDATE_DOCS") == "1"
	changed := false
	for _, r := range rows {
		var want []string
		for _, k := range r.keys {
			if !known[k] {
				t.Errorf("%s: the key table names `%s`, which is not a key of config.Config", referencePage, k)
				continue
			}
			want = append(want, defaultOf(def, strings.Split(k, ".")))
		}
		if strings.TrimSpace(r.meaning) == "" {
			t.Errorf("%s: the row of `%s` says nothing in its meaning column", referencePage, strings.Join(r.keys, "`, `"))
		}
		if slices.Equal(r.defaults, want) {
			continue
		}
		if update {
			r.cells[2] = " " + strings.TrimSpace("`"+strings.Join(want, "`, `")+"`"+r.note) + " "
			lines[r.line] = strings.Join(r.cells, "|")
			changed = true
			continue
		}
		t.Errorf("%s: `%s` defaults to `%s`, the key table says %q: ROBOTSPROXY_UPDATE_DOCS=1 go test -run TestConfigurationReference ./internal/config redraws the column",
			referencePage, strings.Join(r.keys, "`, `"), strings.Join(want, "`, `"), r.cells[2])
	}
	if len(missing) > 0 && update {
		var add []string
		for _, k := range missing {
			add = append(add, fmt.Sprintf("| `%s` | `%s` |  |", k, defaultOf(def, strings.Split(k, "."))))
		}
		lines = slices.Insert(lines, end, add...)
		changed = true
		t.Errorf("%s: added rows for %s: write what each means", referencePage, strings.Join(missing, ", "))
	} else if len(missing) > 0 {
		t.Errorf("%s: the key table has no row for %s", referencePage, strings.Join(missing, ", "))
	}
	if changed {
		if err := os.WriteFile(referencePage, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: redrew the key table's default column", referencePage)
	}
}

// keyTable returns the rows of the first table of lines whose header is
// | key | default | meaning |, and the index of the line after it.
func keyTable(lines []string) (rows []keyRow, end int) {
	start := slices.Index(lines, "| key | default | meaning |")
	if start < 0 {
		return nil, 0
	}
	end = start + 2
	for ; end < len(lines) && strings.HasPrefix(lines[end], "|"); end++ {
		cells := splitRow(lines[end])
		if len(cells) < 5 {
			continue
		}
		r := keyRow{line: end, cells: cells, meaning: cells[3]}
		r.keys, _ = backticked(cells[1])
		r.defaults, r.note = backticked(cells[2])
		if len(r.keys) > 0 {
			rows = append(rows, r)
		}
	}
	return rows, end
}

// splitRow splits a Markdown table row at its unescaped "|": the cells,
// with the empty strings before the first and after the last "|".
func splitRow(line string) []string {
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line):
			cur.WriteString(line[i : i+2])
			i++
		case line[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, cur.String())
}

// backticked returns the `quoted` items of a cell, and what follows the
// last of them ("" when there is none).
func backticked(cell string) (items []string, after string) {
	parts := strings.Split(cell, "`")
	for i := 1; i+1 < len(parts); i += 2 {
		items = append(items, parts[i])
	}
	if len(parts) >= 3 {
		after = strings.TrimRight(parts[len(parts)-1], " ")
	}
	return items, after
}

// defaultOf returns the value at the yaml key path of v (a config.Config),
// as a configuration file writes it: "" for an empty string, durations in
// their shortest form (1m, not 1m0s), lists in brackets.
func defaultOf(v reflect.Value, path []string) string {
	for _, name := range path {
		t := v.Type()
		i := slices.IndexFunc(reflect.VisibleFields(t), func(f reflect.StructField) bool {
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			return tag == name
		})
		if i < 0 {
			return "?"
		}
		v = v.Field(i)
	}
	return formatValue(v)
}

// formatValue writes v as a configuration file writes it.
func formatValue(v reflect.Value) string {
	if d, ok := v.Interface().(time.Duration); ok {
		s := d.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	case reflect.Slice:
		var items []string
		for i := range v.Len() {
			items = append(items, formatValue(v.Index(i)))
		}
		return "[" + strings.Join(items, ", ") + "]"
	case reflect.Map:
		if v.Len() == 0 {
			return "{}"
		}
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}
