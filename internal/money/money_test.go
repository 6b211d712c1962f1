package money_test

import (
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/money"
)

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want money.Amount
		str  string
		bad  bool
	}{
		{in: "0.01", want: 10_000, str: "0.01"},
		{in: "1", want: 1_000_000, str: "1"},
		{in: "1.5", want: 1_500_000, str: "1.50"},
		{in: "0.000001", want: 1, str: "0.000001"},
		{in: "0.125", want: 125_000, str: "0.125"},
		{in: "1000000000", want: money.MaxAmount, str: "1000000000"},
		{in: "1000000000.000001", bad: true},
		{in: "0.0000001", bad: true},
		{in: "-1", bad: true},
		{in: "+1", bad: true},
		{in: "1e3", bad: true},
		{in: ".5", bad: true},
		{in: "5.", bad: true},
		{in: "", bad: true},
		{in: "1.2.3", bad: true},
		{in: "99999999999", bad: true},
		{in: "０.01", bad: true},
	} {
		got, err := money.ParseAmount(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseAmount(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseAmount(%q) = %d (%q), %v; want %d (%q)", tc.in, got, got.String(), err, tc.want, tc.str)
		}
	}
}

func TestParsePrice(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want money.Price
		bad  bool
	}{
		{in: "USD 0.01", want: money.Price{Currency: "USD", Amount: 10_000}},
		{in: " EUR 2 ", want: money.Price{Currency: "EUR", Amount: 2_000_000}},
		{in: "usd 0.01", bad: true},
		{in: "USDX 0.01", bad: true},
		{in: "USD", bad: true},
		{in: "USD  0.01", bad: true},
		{in: "0.01 USD", bad: true},
		{in: "USD -0.01", bad: true},
	} {
		got, err := money.ParsePrice(tc.in)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("ParsePrice(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
