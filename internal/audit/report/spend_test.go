package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// spendLog has 7 paid lines of 0.01 USD and 0.3333335 worth of odd
// amounts, unpaid 402s, a line without payment fields, a charge in EUR
// and an unreadable charge.
const spendLog = `{"time":"2026-11-22T10:00:00Z","decision":"allow","product_token":"ExampleBot","url":"https://a.example/1","price":"0.01","charged":"0.01","currency":"USD","status":200}
{"time":"2026-11-22T10:00:01Z","decision":"allow","product_token":"ExampleBot","url":"https://a.example/2","price":"0.01","charged":"0.01","currency":"USD","status":200}
{"time":"2026-11-22T10:00:02Z","decision":"allow","product_token":"ExampleBot","url":"https://a.example/3","price":"0.01","charged":"0.01","currency":"USD","status":200}
{"time":"2026-11-22T10:00:03Z","decision":"allow","product_token":"ExampleBot","url":"https://b.example/1","price":"0.01","charged":"0.01","currency":"USD","status":200}
{"time":"2026-11-22T10:00:04Z","decision":"allow","product_token":"ExampleBot","url":"https://b.example/2","price":"0.01","charged":"0.01","currency":"USD","status":200}
{"time":"2026-11-22T10:00:05Z","decision":"allow","product_token":"ExampleBot","user":"alice","url":"https://b.example/3","price":"0.01","charged":"0.01","currency":"USD","status":200}
{"time":"2026-11-22T10:00:06Z","decision":"allow","product_token":"ExampleBot","user":"alice","url":"https://b.example/4","price":"0.01","charged":"0.01","currency":"USD","status":200}
{"time":"2026-11-22T10:00:07Z","decision":"allow","product_token":"ExampleBot","url":"https://a.example/4","price":"0.01","currency":"USD","not_paid":"over-budget","status":402}
{"time":"2026-11-22T10:00:08Z","decision":"allow","product_token":"ExampleBot","url":"https://a.example/5","price":"0.01","currency":"USD","not_paid":"over-budget","status":402}
{"time":"2026-11-22T10:00:09Z","decision":"allow","product_token":"OtherBot","url":"https://a.example/6","price":"0.01","currency":"USD","not_paid":"no-budget","status":402}
{"time":"2026-11-22T10:00:10Z","decision":"allow","product_token":"OtherBot","url":"https://a.example/7","price":"1","currency":"USD","not_paid":"something-new","status":402}
{"time":"2026-11-22T10:00:11Z","decision":"allow","product_token":"OtherBot","url":"https://c.example/1","status":200}
{"time":"2026-11-22T10:00:12Z","decision":"allow","product_token":"OtherBot","url":"https://c.example/2","price":"2.5","charged":"2.5","currency":"EUR","status":200}
{"time":"2026-11-22T10:00:13Z","decision":"allow","product_token":"OtherBot","url":"https://c.example/3","charged":"1e3","currency":"EUR","status":200}
{"time":"2026-11-22T10:00:14Z","decision":"allow","product_token":"OtherBot","url":"https://c.example/4","price":"0.000001","charged":"0.000001","currency":"USD","status":200}
`

func TestSpend(t *testing.T) {
	p := writeFile(t, t.TempDir(), "audit.log", spendLog)
	rep, err := Collect([]string{p}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Spend
	if s.Priced != 14 || s.Paid != 10 || s.Unsummed != 1 {
		t.Errorf("priced %d, paid %d, unsummed %d; want 14, 10, 1", s.Priced, s.Paid, s.Unsummed)
	}
	if want := []Money{{"EUR", "2.50"}, {"USD", "0.070001"}}; !reflect.DeepEqual(s.Charged, want) {
		t.Errorf("charged %v, want %v", s.Charged, want)
	}
	if want := map[string]uint64{"over-budget": 2, "no-budget": 1, "other": 1}; !reflect.DeepEqual(s.NotPaid, want) {
		t.Errorf("not paid %v, want %v", s.NotPaid, want)
	}
	ids := map[string]SpendRow{}
	for _, r := range s.Identities.Rows {
		ids[r.Key] = r
	}
	for key, want := range map[string]SpendRow{
		"token:ExampleBot": {Key: "token:ExampleBot", Priced: 7, Paid: 5, Charged: []Money{{"USD", "0.05"}}, NotPaid: map[string]uint64{"over-budget": 2}},
		"user:alice":       {Key: "user:alice", Priced: 2, Paid: 2, Charged: []Money{{"USD", "0.02"}}, NotPaid: map[string]uint64{}},
		"token:OtherBot": {Key: "token:OtherBot", Priced: 5, Paid: 3, Charged: []Money{{"EUR", "2.50"}, {"USD", "0.000001"}},
			NotPaid: map[string]uint64{"no-budget": 1, "other": 1}, Unsummed: 1},
	} {
		if !reflect.DeepEqual(ids[key], want) {
			t.Errorf("identity %s: got %+v, want %+v", key, ids[key], want)
		}
	}
	if len(s.Hosts.Rows) != 3 || s.Hosts.Rows[0].Key != "a.example" || s.Hosts.Rows[0].Priced != 7 ||
		!reflect.DeepEqual(s.Hosts.Rows[1].Charged, []Money{{"USD", "0.04"}}) {
		t.Errorf("hosts %+v", s.Hosts.Rows)
	}

	for _, format := range Formats() {
		var b bytes.Buffer
		if err := Render(&b, rep, format); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		switch format {
		case "json":
			var got struct{ Spend Spend }
			if err := json.Unmarshal(b.Bytes(), &got); err != nil || !reflect.DeepEqual(got.Spend, s) {
				t.Errorf("json spend: %v\n got %+v\nwant %+v", err, got.Spend, s)
			}
		case "csv":
			cr := csv.NewReader(strings.NewReader(out))
			cr.FieldsPerRecord = -1
			recs, err := cr.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range recs {
				if r[0] == "spend_identities" && r[1] == "token:ExampleBot" {
					found = reflect.DeepEqual(r, []string{"spend_identities", "token:ExampleBot", "7", "5", "USD 0.05", "over-budget 2", "0", "0"})
				}
			}
			if !found {
				t.Errorf("csv: no spend_identities row for token:ExampleBot as expected:\n%s", out)
			}
		default:
			for _, want := range []string{"Spend (pay per crawl)", "Spend per identity", "Spend per host", "EUR 2.50; USD 0.070001", "over-budget 2; no-budget 1; other 1", "token:ExampleBot", "b.example"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: no %q", format, want)
				}
			}
		}
	}
}
