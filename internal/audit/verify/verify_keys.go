package verify

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/audit"
)

// keyWindow is one archived appearance of a key: published at from (a
// start or reload), valid from nbf until exp (seconds since the epoch, 0
// for no bound).
type keyWindow struct {
	from     time.Time
	nbf, exp int64
}

// keyring answers whether a keyid was in the key directory at a time,
// from the archive's key snapshots, read on first use and read again when
// a keyid is missing and the snapshots changed (the proxy reloaded while
// the logs were verified).
type keyring struct {
	dir    string
	loaded bool
	files  int // snapshots read, good or bad
	keys   map[string][]keyWindow
	bad    error // snapshots that did not check out
}

// load reads the snapshots.
func (k *keyring) load() error {
	snaps, bad, err := audit.ReadKeySnapshots(k.dir)
	if err != nil {
		return err
	}
	k.loaded, k.bad, k.keys = true, bad, map[string][]keyWindow{}
	k.files = len(snaps) + countJoined(bad)
	for _, s := range snaps {
		keys, _ := s.Keys()
		for _, key := range keys {
			k.add(key.Kid, keyWindow{from: s.SeenAt, nbf: key.Nbf, exp: key.Exp})
		}
	}
	return nil
}

// add records a window of kid: one per validity (nbf, exp), the earliest
// publication kept, so that a key published at every one of many reloads
// costs one window.
func (k *keyring) add(kid string, w keyWindow) {
	ws := k.keys[kid]
	for i := range ws {
		if ws[i].nbf == w.nbf && ws[i].exp == w.exp {
			if w.from.Before(ws[i].from) {
				ws[i].from = w.from
			}
			return
		}
	}
	k.keys[kid] = append(ws, w)
}

// countJoined counts the errors joined into err.
func countJoined(err error) int {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return len(j.Unwrap())
	}
	if err != nil {
		return 1
	}
	return 0
}

// changed reports whether the number of snapshot files differs from what
// was read.
func (k *keyring) changed() bool {
	n := 0
	_ = filepath.WalkDir(filepath.Join(k.dir, audit.KeysDir), func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			n++
		}
		return nil
	})
	return n != k.files
}

// check reports whether a signature made at created (seconds since the
// epoch) with the key kid could have been made by the proxy: kid was in
// a directory published at or before created, and that key's nbf/exp
// cover created. The kind is "" when it could.
func (k *keyring) check(kid string, created int64) (Kind, string, error) {
	if !k.loaded || len(k.keys[kid]) == 0 && k.changed() {
		if err := k.load(); err != nil {
			return "", "", err
		}
	}
	ws := k.keys[kid]
	if len(ws) == 0 {
		msg := fmt.Sprintf("signature_keyid %s is in no key directory the archive keeps (%s/): the proxy never published that key", kid, audit.KeysDir)
		if k.bad != nil {
			return KindAltered, msg + "; and key snapshots were altered: " + k.bad.Error(), nil
		}
		return KindSignature, msg, nil
	}
	var why []string
	for _, w := range ws {
		switch {
		case w.from.Unix() > created:
			why = append(why, fmt.Sprintf("published %s, after the signature", w.from.Format(time.RFC3339)))
		case w.nbf != 0 && created < w.nbf:
			why = append(why, fmt.Sprintf("not valid before %s (nbf)", unixTime(w.nbf)))
		case w.exp != 0 && created >= w.exp:
			why = append(why, fmt.Sprintf("expired at %s (exp)", unixTime(w.exp)))
		default:
			return "", "", nil
		}
	}
	slices.Sort(why)
	why = slices.Compact(why)
	return KindSignature, fmt.Sprintf("signature_keyid %s signed at %s (signature_created %d), when that key was not in the directory: %s",
		kid, unixTime(created), created, strings.Join(why, "; ")), nil
}

// unixTime formats seconds since the epoch as RFC 3339, UTC.
func unixTime(s int64) string { return time.Unix(s, 0).UTC().Format(time.RFC3339) }

// signature checks the line's signature_keyid, if any, against the
// archived key directory (see keyring.check). ChainOnly checks nothing;
// without an archive the line is unverifiable. The error is an I/O error
// reading the archive.
func (v *verifier) signature(file string, n int, l *auditLine) error {
	if l.SignatureKeyID == "" && !l.HasCreated {
		return nil
	}
	v.res.Signed++
	switch {
	case v.opts.ChainOnly:
		return nil
	case l.SignatureKeyID == "" || !l.HasCreated:
		v.problem(file, n, KindSignature, "signature_keyid and signature_created go together: the line has one without the other")
		return nil
	case v.opts.Archive == "":
		v.problem(file, n, KindUnverifiable, "no archive: signature_keyid cannot be checked against the key directory")
		return nil
	}
	kind, msg, err := v.keys.check(l.SignatureKeyID, l.SignatureCreated)
	switch {
	case err != nil:
		return err
	case kind == "":
		v.res.SignedVerified++
	default:
		v.problem(file, n, kind, msg)
	}
	return nil
}
