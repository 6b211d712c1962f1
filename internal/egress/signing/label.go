package signing

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/dunglas/httpsfv"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// maxLabelTries bounds the search for a free label.
const maxLabelTries = 100

// freeLabel returns want, or the first of want1, want2, ... that no member
// of the request's Signature-Input, Signature or Signature-Agent uses: a
// client that signed the request itself keeps its signature. A field that
// is not an RFC 9651 Dictionary is an error: we cannot add to it without
// breaking it.
func freeLabel(h http.Header, want string) (string, error) {
	var used []*httpsfv.Dictionary
	for _, name := range []string{headerSignatureInput, headerSignature, headerAgent} {
		v := h.Values(name)
		if len(v) == 0 {
			continue
		}
		d, err := httpsfv.UnmarshalDictionary(v)
		if err != nil {
			return "", fmt.Errorf("signing: the request's %s is not a structured field dictionary (RFC 9651), so ours cannot be added: %w", name, err)
		}
		used = append(used, d)
	}
	if len(used) == 0 {
		return want, nil
	}
	for i := 0; i < maxLabelTries; i++ {
		label := want
		if i > 0 {
			label = want + strconv.Itoa(i)
		}
		if !inAny(used, label) {
			return label, nil
		}
	}
	return "", fmt.Errorf("signing: no free signature label %s..%s%d", want, want, maxLabelTries-1)
}

func inAny(ds []*httpsfv.Dictionary, name string) bool {
	for _, d := range ds {
		if _, ok := d.Get(name); ok {
			return true
		}
	}
	return false
}

// addAgent adds the member label="url" to the Signature-Agent dictionary
// (draft-ietf-webbotauth-httpsig-protocol-01, RFC 9651 3.2),
// leaving the client's members as they are. When a client's signature
// covers the whole Signature-Agent field (not one member of it), adding a
// member would break that signature: an error.
func addAgent(h http.Header, label, url string) error {
	if err := rules.CheckPrintable(url); err != nil {
		return fmt.Errorf("signing: Signature-Agent: %w", err)
	}
	if len(h.Values(headerAgent)) > 0 {
		if err := wholeAgentCovered(h); err != nil {
			return err
		}
	}
	addMember(h, headerAgent, label+"="+sfString(url))
	return nil
}

// wholeAgentCovered returns an error when a signature of the client's
// covers "signature-agent" without a key parameter.
func wholeAgentCovered(h http.Header) error {
	v := h.Values(headerSignatureInput)
	if len(v) == 0 {
		return nil
	}
	d, err := httpsfv.UnmarshalDictionary(v)
	if err != nil {
		return fmt.Errorf("signing: the request's Signature-Input: %w", err)
	}
	for _, name := range d.Names() {
		m, _ := d.Get(name)
		il, ok := m.(httpsfv.InnerList)
		if !ok {
			continue
		}
		for _, it := range il.Items {
			if s, _ := it.Value.(string); s == "signature-agent" {
				if _, keyed := it.Params.Get("key"); !keyed {
					return fmt.Errorf("signing: the client's signature %q covers the whole Signature-Agent field; adding our member would break it", name)
				}
			}
		}
	}
	return nil
}
