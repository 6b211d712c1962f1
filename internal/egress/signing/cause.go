package signing

import "errors"

// Causes of a signing failure, as ErrorCause names them: the values of
// egress.Record.SigningError and of the cause label of
// robotsproxy_signing_errors_total.
const (
	// CauseBodyTooLarge: the request body is over signing.max_body_bytes
	// (ErrBodyTooLarge).
	CauseBodyTooLarge = "body-too-large"
	// CauseKeyNotValid: the active key is outside its validity (nbf, exp).
	CauseKeyNotValid = "key-not-valid"
	// CauseClientField: a field of the client's (Signature-Input,
	// Signature, Signature-Agent, Content-Digest) cannot be added to or
	// does not match the body.
	CauseClientField = "client-field"
	// CauseOther: anything else (the body could not be read, no nonce).
	CauseOther = "other"
)

// causeError is err with the Cause it counts as; its text is err's.
type causeError struct {
	cause string
	err   error
}

func (e *causeError) Error() string { return e.err.Error() }
func (e *causeError) Unwrap() error { return e.err }

// withCause returns err marked with cause, nil when err is nil.
func withCause(cause string, err error) error {
	if err == nil {
		return nil
	}
	return &causeError{cause: cause, err: err}
}

// ErrorCause names the cause of a signing error (SignAt's, Transport's):
// one of the Cause constants, "" for a nil error.
func ErrorCause(err error) string {
	var c *causeError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrBodyTooLarge):
		return CauseBodyTooLarge
	case errors.As(err, &c):
		return c.cause
	}
	return CauseOther
}
