package signing

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
)

// signatureBase builds an RFC 9421 signature base (section 2.5) and the
// covered components' inner list beside it, one component at a time.
type signatureBase struct {
	base strings.Builder // "id: value\n" lines
	list strings.Builder // the inner list: ("id" "id";key="l" ...)
}

// grow makes room for a base whose values take about n octets, besides
// the identifiers and parameters.
func (b *signatureBase) grow(n int) {
	b.base.Grow(n + 512)
	b.list.Grow(256)
}

// add covers one component: id is its serialized identifier
// (`"@method"`, `"signature-agent";key="label"`), value its value.
func (b *signatureBase) add(id, value string) {
	if b.list.Len() == 0 {
		b.list.WriteByte('(')
	} else {
		b.list.WriteByte(' ')
	}
	b.list.WriteString(id)
	b.base.WriteString(id)
	b.base.WriteString(": ")
	b.base.WriteString(value)
	b.base.WriteByte('\n')
}

// addField covers a request header field: its field lines, each trimmed
// of surrounding white space, joined with ", " (RFC 9421 section 2.1).
func (b *signatureBase) addField(h http.Header, name string) {
	vals := h.Values(name)
	value := strings.TrimSpace(vals[0])
	if len(vals) > 1 {
		trimmed := make([]string, len(vals))
		for i, v := range vals {
			trimmed[i] = strings.TrimSpace(v)
		}
		value = strings.Join(trimmed, ", ")
	}
	b.add(`"`+name+`"`, value)
}

// sigParams are a signature's parameters (RFC 9421 section 2.3), in the
// order they are serialized: created, expires, nonce, keyid, tag, the
// order of draft-ietf-webbotauth-httpsig-protocol-01's directory test
// vector (appendix E.2.3), which TestDirectoryVector reproduces.
type sigParams struct {
	created, expires  int64
	nonce, tag, keyID string
}

// finish appends the parameters to the inner list and the
// "@signature-params" line to the base, and returns the inner list with
// its parameters (the Signature-Input member's value) and the base.
func (b *signatureBase) finish(p sigParams) (input, base string) {
	if b.list.Len() == 0 {
		b.list.WriteByte('(')
	}
	b.list.WriteString(");created=")
	b.list.WriteString(strconv.FormatInt(p.created, 10))
	b.list.WriteString(";expires=")
	b.list.WriteString(strconv.FormatInt(p.expires, 10))
	for _, kv := range [...][2]string{{";nonce=", p.nonce}, {";keyid=", p.keyID}, {";tag=", p.tag}} {
		if kv[1] == "" {
			continue // a parameter not set (the directory's have no nonce)
		}
		b.list.WriteString(kv[0])
		b.list.WriteString(sfString(kv[1]))
	}
	input = b.list.String()
	b.base.WriteString(`"@signature-params": `)
	b.base.WriteString(input)
	return input, b.base.String()
}

// contentDigest returns the Content-Digest field value of body (RFC 9530
// section 2, sha-256).
func contentDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return digestOf(sum[:])
}

// digestOf returns the Content-Digest field value of a SHA-256 sum.
func digestOf(sum []byte) string {
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum) + ":"
}

// signBase signs a signature base with Ed25519 and returns the Signature
// member's value, an RFC 9651 byte sequence.
func signBase(priv ed25519.PrivateKey, base string) string {
	return ":" + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte(base))) + ":"
}

// sfString serializes s as an RFC 9651 String (section 4.1.6); s must be
// printable ASCII, which the callers check (rules.CheckAgentURL, rules.IsStructuredKey) or
// produce (base64).
func sfString(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return `"` + s + `"`
	}
	return strconv.Quote(s) // only \" and \\ escapes occur in printable ASCII
}
