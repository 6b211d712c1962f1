package robots

import (
	"reflect"
	"testing"
)

func TestLicenses(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []License
	}{
		{"none", "User-agent: *\nDisallow: /x\n", nil},
		{"before groups", "License: https://example.com/license.xml\nUser-agent: *\nDisallow: /x\n",
			[]License{{URL: "https://example.com/license.xml", Line: 1}}},
		{"inside a group, any case", "User-agent: a\nDisallow: /x\nLICENSE:   http://e.com/l.xml  # c\n",
			[]License{{URL: "http://e.com/l.xml", Line: 3}}},
		{"relative and other schemes left out, repeats once",
			"License: /license.xml\nLicense: ftp://e.com/l.xml\nLicense: https://e.com/a.xml\nlicense: https://e.com/a.xml\nLicense: https://e.com/b.xml\n",
			[]License{{URL: "https://e.com/a.xml", Line: 3}, {URL: "https://e.com/b.xml", Line: 5}}},
		{"empty value", "License:\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse([]byte(tt.body))
			if got := r.Licenses(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Licenses() = %+v, want %+v", got, tt.want)
			}
			if has := r.HasLicense(); has != (len(tt.want) > 0 || tt.name == "empty value") {
				t.Errorf("HasLicense() = %v", has)
			}
		})
	}
}

// TestLicenseKeepsGroups checks that a License line in a group neither ends
// it nor changes its rules, and stays a record.
func TestLicenseKeepsGroups(t *testing.T) {
	r := Parse([]byte("User-agent: a\nLicense: https://e.com/l.xml\nDisallow: /x\nUser-agent: b\nDisallow: /y\n"))
	if v := r.Test("/x", "a"); v.Allowed || v.Rule.Line != 3 {
		t.Errorf("a /x: %+v, want disallowed by line 3", v)
	}
	if v := r.Test("/y", "a"); !v.Allowed {
		t.Errorf("a /y: %+v, want allowed", v)
	}
	recs := r.Records()
	if len(recs) != 1 || recs[0].Key != "license" || recs[0].Line != 2 || recs[0].Group != 0 {
		t.Errorf("Records() = %+v", recs)
	}
}
