package egress

import (
	"net/netip"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Table maps identities to a setting of one egress step (a signing key
// set, a budget): per pinned user, per client range, per product token,
// and a default. The zero Table maps nothing. Build it once (at start or
// reload) and read it from any number of goroutines.
type Table[T any] struct {
	// Users maps proxy user names (identity.users[].name) to settings.
	Users map[string]T
	// Ranges maps client ranges (identity.client_ranges[].cidr, masked)
	// to settings.
	Ranges map[netip.Prefix]T
	// Tokens maps product tokens to settings; product tokens compare
	// case-insensitively (RFC 9309 2.2.1), so keys are lower-case.
	Tokens map[string]T
	// Default applies to an identity none of the others names; nil means
	// none.
	Default *T
}

// Lookup returns the setting for id, and false when there is none. The
// most specific entry wins: the pinned user's, then the pinning client
// range's, then the product token's, then the default.
func (t *Table[T]) Lookup(id Identity) (T, bool) {
	if v, ok := t.Users[id.User]; ok && id.User != "" {
		return v, true
	}
	if v, ok := t.Ranges[id.Range]; ok && id.Range.IsValid() {
		return v, true
	}
	if v, ok := t.Tokens[rules.TokenKey(id.Token)]; ok && id.Token != "" {
		return v, true
	}
	if t.Default != nil {
		return *t.Default, true
	}
	var zero T
	return zero, false
}

// TokenKey returns the key of Table.Tokens for a product token
// (rules.TokenKey).
func TokenKey(token string) string { return rules.TokenKey(token) }
