package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// configKey is one key of the configuration file: its dotted path and, for
// a key of a list element (identity.users[].token), the list's path.
type configKey struct {
	path string // e.g. "cache.max_ttl", or "token" for a list element
	list string // e.g. "identity.users" for a list element's key, else ""
}

// configKeys walks t by its yaml tags and returns every key path, depth
// first: a section (struct) gives its keys instead of itself, a list of
// structs itself and then its elements' keys.
func configKeys(t reflect.Type, prefix, list string) []configKey {
	var out []configKey
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		switch ft := f.Type; {
		case ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath():
			out = append(out, configKeys(ft, path, list)...) // a section: its keys
			continue
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configKey{path: path, list: list})
			out = append(out, configKeys(ft.Elem(), "", path)...)
			continue
		}
		out = append(out, configKey{path: path, list: list})
	}
	return out
}

// TestConfigurationReference checks that every key of config.Config is
// documented in docs/configuration.md and shown in config.yaml, so that
// neither can drift from the code. A key is documented when the
// reference's key table has its row, with its default as config.Default
// gives it (checkKeyTable); a key of a list element (identity.users:
// token) when a line naming the list also names the key. In config.yaml every key path must be present in the parsed
// YAML, except a list element's keys, which the file shows in a commented
// example ("#   token: ...").
func TestConfigurationReference(t *testing.T) {
	keys := configKeys(reflect.TypeFor[config.Config](), "", "")
	if len(keys) < 75 {
		t.Fatalf("walked %d keys of config.Config, want at least 75: the walk is broken", len(keys))
	}
	checkKeyTable(t, keys)
	ref, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := yaml.Unmarshal(raw, &tree); err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	doc := string(ref)
	for _, k := range keys {
		if k.list == "" { // in the key table: checkKeyTable
			if !hasPath(tree, strings.Split(k.path, ".")) {
				t.Errorf("config.yaml has no key %s", k.path)
			}
			continue
		}
		leaf := regexp.MustCompile(`\b` + regexp.QuoteMeta(k.path) + `\b`)
		found := false
		for _, line := range strings.Split(doc, "\n") {
			if strings.Contains(line, "`"+k.list+"`") && leaf.MatchString(line) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/configuration.md: no line names both `%s` and its element key %s", k.list, k.path)
		}
		if !regexp.MustCompile(`(?m)^\s*#\s+(- )?` + regexp.QuoteMeta(k.path) + `:`).Match(raw) {
			t.Errorf("config.yaml: the commented example of %s does not show %s", k.list, k.path)
		}
	}
}

// hasPath reports whether the parsed YAML tree holds the key path.
func hasPath(tree map[string]any, path []string) bool {
	v, ok := tree[path[0]]
	if !ok {
		return false
	}
	if len(path) == 1 {
		return true
	}
	sub, ok := v.(map[string]any)
	return ok && hasPath(sub, path[1:])
}
