package policy_test

import (
	"io"
	"net/http"
	"time"

	"github.com/robotsproxy/robotsproxy/policy"
)

// serve answers every request with status, body and header key-value pairs.
func serve(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// unavailableAccess is a scripted 404 result; label goes in FinalURL.
func unavailableAccess(label string, maxAge time.Duration) policy.Access {
	return policy.Access{Result: policy.Unavailable, Status: 404, FinalURL: label, MaxAge: maxAge}
}
