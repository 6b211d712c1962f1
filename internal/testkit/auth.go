package testkit

import (
	"encoding/base64"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// hashes memoises BcryptHash's hashes by password.
var hashes sync.Map

// BcryptHash returns a bcrypt hash of password at bcrypt.MinCost (for
// speed), the same hash for the same password for the whole test binary.
func BcryptHash(t testing.TB, password string) []byte {
	t.Helper()
	if h, ok := hashes.Load(password); ok {
		return h.([]byte)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	hashes.Store(password, h)
	return h
}

// BasicAuth returns a Proxy-Authorization (or Authorization) value for
// Basic credentials (RFC 7617): "Basic " and base64 of "user:password".
func BasicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}
