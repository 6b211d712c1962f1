package uaparser

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// Rule is one of uap-core's parsers as data/regexes.yaml keeps it, in
// uap-core's own keys: a regexp (RE2 syntax, which Go's regexp accepts
// for every rule uap-core ships), its flags ("i": case-insensitive) and
// the family replacement of a user_agent_parsers rule ("" means the first
// group; "$1" to "$9" stand for the groups), or the device replacement
// ("Spider") of a device_parsers rule.
type Rule struct {
	Regex  string `yaml:"regex"`
	Flags  string `yaml:"regex_flag,omitempty"`
	Family string `yaml:"family_replacement,omitempty"`
	Device string `yaml:"device_replacement,omitempty"`
}

// File is the data as data/regexes.yaml holds it: a regexes.yaml of
// uap-core's layout, which ua-parser's Go library reads as it is, with
// the source it was built from.
type File struct {
	Source Source `yaml:"source"`
	// Families are the user_agent_parsers, in uap-core's order.
	Families []Rule `yaml:"user_agent_parsers"`
	// Spiders are the device_parsers whose device is "Spider" (uap-core's
	// mark of a crawler), in uap-core's order; the other devices are
	// left out, so that a header is a spider's when any of them matches.
	Spiders []Rule `yaml:"device_parsers"`
}

// Build derives the data from uap-core's regexes.yaml: every
// user_agent_parsers rule with its flags and family replacement (the
// version replacements are left out: only the family is asked), and
// every device_parsers rule whose device replacement is "Spider". An
// error is a file that does not decode, one without user_agent_parsers,
// or a rule Go's regexp rejects.
func Build(regexesYAML []byte, src Source) (*File, error) {
	var in struct {
		UA     []Rule `yaml:"user_agent_parsers"`
		Device []Rule `yaml:"device_parsers"`
	}
	if err := yaml.Unmarshal(regexesYAML, &in); err != nil {
		return nil, fmt.Errorf("build ua-parser data: regexes.yaml: %w", err)
	}
	if len(in.UA) == 0 {
		return nil, fmt.Errorf("build ua-parser data: regexes.yaml has no user_agent_parsers")
	}
	f := &File{Source: src, Families: in.UA}
	for _, r := range in.Device {
		if r.Device == "Spider" {
			f.Spiders = append(f.Spiders, Rule{Regex: r.Regex, Flags: r.Flags, Device: r.Device})
		}
	}
	if err := check(f); err != nil {
		return nil, fmt.Errorf("build ua-parser data: %w", err)
	}
	return f, nil
}

// check compiles every rule of f as ua-parser's Go library does, so that
// a rule it would reject (it panics then) is an error.
func check(f *File) error {
	for set, rules := range map[string][]Rule{"user_agent_parsers": f.Families, "device_parsers": f.Spiders} {
		for i, r := range rules {
			expr := r.Regex
			if r.Flags != "" {
				expr = "(?" + r.Flags + ")" + expr
			}
			if _, err := regexp.Compile(expr); err != nil {
				return fmt.Errorf("%s rule %d: %w", set, i, err)
			}
		}
	}
	return nil
}

// Encode writes f as data/regexes.yaml holds it, with a header saying
// how it is made. The source's licence text is not in it: it is kept
// beside it as data/LICENSE.uap-core.
func Encode(f *File) ([]byte, error) {
	g := *f
	g.Source.LicenseText = ""
	body, err := yaml.Marshal(&g)
	if err != nil {
		return nil, fmt.Errorf("encode ua-parser data: %w", err)
	}
	head := "# Built by go generate ./internal/identity/... from uap-core's regexes.yaml\n" +
		"# (see source): its user_agent_parsers and its device_parsers of device Spider. Do not edit.\n"
	return append([]byte(head), body...), nil
}
