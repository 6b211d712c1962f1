package signing

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// ErrorCause names why SignAt refused: a body over the bound, a key
// outside its validity, a client's field (see TestSignRefusals), anything
// else; the error's text stays the underlying error's.
func TestErrorCause(t *testing.T) {
	agent := newAgent(t)
	now := time.Now()
	expired := *agent.Active
	expired.NotAfter = now.Add(-time.Hour)
	for _, tc := range []struct {
		name  string
		agent *Agent
		s     Settings
		body  string
		want  string
	}{
		{"signed", agent, Settings{}, "", ""},
		{"body too large", agent, Settings{MaxBodyBytes: 4}, "12345", CauseBodyTooLarge},
		{"key expired", &Agent{Keys: []*Key{&expired}, Active: &expired, URL: agentURL}, Settings{}, "", CauseKeyNotValid},
		{"public key only", &Agent{Active: &Key{ID: agent.Active.ID, Public: agent.Active.Public}, URL: agentURL}, Settings{}, "", CauseOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, "POST", "http://example.com/", tc.body, false)
			_, err := SignAt(req, tc.agent, &tc.s, now, nil)
			if got := ErrorCause(err); got != tc.want {
				t.Errorf("cause %q (error %v), want %q", got, err, tc.want)
			}
		})
	}
	wrapped := fmt.Errorf("outer: %w", withCause(CauseKeyNotValid, errors.New("inner")))
	if ErrorCause(wrapped) != CauseKeyNotValid || wrapped.Error() != "outer: inner" {
		t.Errorf("wrapped: cause %q, text %q", ErrorCause(wrapped), wrapped.Error())
	}
}
