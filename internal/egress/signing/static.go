package signing

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// HeadersSuffix names the file beside each static file that holds the
// header fields to send with it: one "Name: value" line each, in the
// order Content-Type, Cache-Control, Content-Digest, Signature-Input,
// Signature.
const HeadersSuffix = ".headers"

// DefaultStaticValidity is how long the signatures of static files are
// valid when WriteStatic is given no validity: a week, so that a weekly
// regeneration keeps them valid.
const DefaultStaticValidity = 7 * 24 * time.Hour

// WriteStatic writes the directory and the cards under dir, for hosting
// at authority (the host, and port when not the default, of the https
// origin that will serve them: the signatures cover it):
//
//	DIR/.well-known/http-message-signatures-directory          the JWKS
//	DIR/.well-known/http-message-signatures-directory.headers  its header fields
//	DIR/.well-known/signature-agent-card                       the first card
//	DIR/.well-known/signature-agent-card.headers
//	DIR/.well-known/signature-agent-cards/SLUG.json            each identity's card
//	DIR/.well-known/signature-agent-cards/SLUG.json.headers
//
// The signatures are made at now and expire validity later (0:
// DefaultStaticValidity): regenerate the files before then. Existing
// files are replaced. It returns the paths written.
func (p *Published) WriteStatic(dir, authority string, now time.Time, validity time.Duration) ([]string, error) {
	if validity <= 0 {
		validity = DefaultStaticValidity
	}
	authority, err := NormalizeAuthority(authority, "https")
	if err != nil {
		return nil, err
	}
	h, err := p.Headers(authority, now, validity)
	if err != nil {
		return nil, err
	}
	var written []string
	write := func(urlPath string, body []byte, h http.Header) error {
		path := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(urlPath, "/")))
		if err := writeFileAtomic(path, body); err != nil {
			return err
		}
		if err := writeFileAtomic(path+HeadersSuffix, headerLines(h)); err != nil {
			return err
		}
		written = append(written, path, path+HeadersSuffix)
		return nil
	}
	if err := write(DirectoryPath, p.body, h); err != nil {
		return written, err
	}
	for i, c := range p.cards {
		body, ch, _, err := p.CardHeaders(c.slug, authority, now, validity)
		if err != nil {
			return written, err
		}
		if i == 0 {
			if err := write(CardPath, body, ch); err != nil {
				return written, err
			}
		}
		if err := write(CardsPrefix+c.slug+".json", body, ch); err != nil {
			return written, err
		}
	}
	return written, nil
}

// headerLines renders h as "Name: value" lines, the fields in a fixed
// order.
func headerLines(h http.Header) []byte {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	order := []string{"Content-Type", "Cache-Control", "Content-Digest", "Signature-Input", "Signature"}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(order, a), slices.Index(order, b)
		if ia < 0 || ib < 0 {
			return strings.Compare(a, b)
		}
		return ia - ib
	})
	var b strings.Builder
	for _, k := range names {
		for _, v := range h[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	return []byte(b.String())
}

// writeFileAtomic writes data to path (mode 0644) through a file renamed
// into place, creating the directories.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("static directory: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("static directory: %w", err)
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(0o644), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("static directory: write %s: %w", path, err)
	}
	return nil
}
