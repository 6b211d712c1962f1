package egress

import (
	"net/netip"
	"testing"
)

func TestTableLookup(t *testing.T) {
	def := "default"
	full := Table[string]{
		Users:   map[string]string{"alice": "alice's"},
		Ranges:  map[netip.Prefix]string{netip.MustParsePrefix("10.0.0.0/8"): "range's"},
		Tokens:  map[string]string{TokenKey("MyBot"): "token's"},
		Default: &def,
	}
	rng := netip.MustParsePrefix("10.0.0.0/8")
	tests := []struct {
		name  string
		table Table[string]
		id    Identity
		want  string
		ok    bool
	}{
		{"user first", full, Identity{User: "alice", Range: rng, Token: "MyBot"}, "alice's", true},
		{"range next", full, Identity{User: "bob", Range: rng, Token: "MyBot"}, "range's", true},
		{"token, any case", full, Identity{Token: "MYBOT"}, "token's", true},
		{"default", full, Identity{Token: "other"}, "default", true},
		{"empty user is no user", Table[string]{Users: map[string]string{"": "x"}}, Identity{}, "", false},
		{"nothing", Table[string]{}, Identity{Token: "MyBot"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.table.Lookup(tt.id)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Lookup(%+v) = %q, %v; want %q, %v", tt.id, got, ok, tt.want, tt.ok)
			}
		})
	}
}
