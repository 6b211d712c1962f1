package server

import (
	"reflect"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// reloadableKeys are the configuration keys (and key trees) a reload
// applies to the running server: what the policy is built from, plus
// allow_open_proxy (checked against the running listeners) and
// shutdown_timeout (read at shutdown). Every other key is wired into a
// listener, the HTTP server, the transport, the robots.txt fetcher and
// cache, the CA or the audit log at start, and needs a restart: a key
// added to config.Config later is restart-only until it is listed here
// and rebuilt by buildPolicy.
var reloadableKeys = []string{
	"mode", "allow_open_proxy", "exempt_hosts", "allow_hosts", "deny_hosts",
	"connect", "identity", "shutdown_timeout",
	// The signing step's settings swap atomically (signing.Transport.Store);
	// signing.enabled builds the egress chain and directory_listen a
	// listener, at start; the key directory is published again at each
	// reload, for its authorities too.
	"signing.label", "signing.expires", "signing.max_body_bytes", "signing.identities", "signing.directory_authorities",
}

// reloadable reports whether key ("identity.users", "cache.max_ttl") is
// applied by a reload.
func reloadable(key string) bool {
	for _, k := range reloadableKeys {
		if key == k || strings.HasPrefix(key, k+".") {
			return true
		}
	}
	return false
}

// configDiff is how a configuration read at reload differs from the
// running one.
type configDiff struct {
	// next is the configuration to run: the file's reloadable keys, and
	// the running values of the restart-only keys.
	next config.Config
	// applied are the reloadable keys whose value changes, dotted
	// ("identity.users", "deny_hosts").
	applied []string
	// restart are the restart-only keys whose value in the file differs
	// from the running one ("listen", "cache.max_ttl"); next keeps the
	// running value.
	restart []string
}

// diffConfig compares the configuration read at reload with the running
// one, key by key (yaml names).
func diffConfig(running, file config.Config) configDiff {
	d := configDiff{next: file}
	d.walk("", reflect.ValueOf(running), reflect.ValueOf(&d.next).Elem())
	return d
}

// walk compares run and next (settable) field by field; a leaf is a
// field that is not a struct, so a list such as identity.users is one key.
func (d *configDiff) walk(prefix string, run, next reflect.Value) {
	for i := range run.NumField() {
		name, _, _ := strings.Cut(run.Type().Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		r, n := run.Field(i), next.Field(i)
		switch {
		case r.Kind() == reflect.Struct:
			d.walk(key, r, n)
		case sameValue(r, n):
		case reloadable(key):
			d.applied = append(d.applied, key)
		default:
			d.restart = append(d.restart, key)
			n.Set(r)
		}
	}
}

// sameValue reports whether two configuration values are equal; an empty
// list equals a missing one ("deny_hosts: []" and "deny_hosts:").
func sameValue(a, b reflect.Value) bool {
	if (a.Kind() == reflect.Slice || a.Kind() == reflect.Map) && a.Len() == 0 && b.Len() == 0 {
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}
