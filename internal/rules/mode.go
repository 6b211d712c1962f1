package rules

import "fmt"

// Mode says how a robots.txt denial is acted on.
type Mode string

const (
	// ModeEnforce answers a request that robots.txt disallows with 403
	// before it reaches the origin. The default.
	ModeEnforce Mode = "enforce"
	// ModeReport forwards a request that robots.txt disallows and only
	// records the denial (Decision.Enforced false): an auditor watches a
	// crawler without changing what it does. Destination policy, private
	// ranges and proxy authentication stay enforced.
	ModeReport Mode = "report"
)

// ParseMode parses "enforce" or "report"; "" is the default, "".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "", ModeEnforce, ModeReport:
		return m, nil
	}
	return "", fmt.Errorf("mode %q: want enforce or report", s)
}
